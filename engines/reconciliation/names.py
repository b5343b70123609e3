"""Merchant names as a bank books them and as a receipt prints them, brought to one form:
'SQ *BLUE BOTTLE COFFEE 0423 SF' and 'Blue Bottle Coffee Inc.' → 'blue bottle coffee sf' and
'blue bottle coffee'; card endings read from a booking text.
"""

from __future__ import annotations

import functools
import re

from rapidfuzz import fuzz

from ..extraction.fields.company_names import name_core
from ..text import fold

# What card processors and wallets put before the merchant's name in a booking text.
PROCESSOR_PREFIX = re.compile(
    r"^\s*(?:sq\s*\*|sumup\s*\*|paypal\s*\*|pp\s*\*|izettle\s*\*|zettle_?\s*\*|iz\s*\*|"
    r"sp\s*\*|tst\s*\*|amzn\s+mktp\s+\w+\s*\*?|google\s*\*|apple\.com/bill|stripe\s*\*|"
    r"ec\s+|pos\s+|kartenzahlung\s+|visa\s+|mastercard\s+)+",
    re.I,
)
# Legal forms the extraction's list leaves out: the Luxembourg S.à r.l. (before its "S.A" is
# taken for a société anonyme) and the European SE at the end of a name ("Zalando SE").
MORE_LEGAL_FORMS = re.compile(r"\bs\.?\s?[aà]\.?\s?r\.?\s?l\b\.?|\bse\b\.?(?=[\s\d]*$)", re.I)
# Booking-text noise that is no part of a name: terminal and store numbers, dates, "Filiale".
NOISE_WORDS = re.compile(r"\b(?:filiale|store|nr|no|fil|tankstelle|station)\b\.?", re.I)
NON_WORD = re.compile(r"[^0-9a-z]+")
TRANSLITERATE = str.maketrans(
    {"ä": "ae", "ö": "oe", "ü": "ue", "Ä": "AE", "Ö": "OE", "Ü": "UE", "ß": "ss"}
)
# A name this short (an OCR'd 'RE' of 'REWE') is found inside any longer name by a partial
# comparison: it must be a whole word of the other name to count.
SHORT_NAME = 4
SHORT_PREFIX = 75.0
DIGITS = re.compile(r"\b\w*\d\w*\b")
# "Karte ****4242", "card ending 4242", "VISA 4242", "xxxx xxxx xxxx 4242". The card's word is
# a whole word ("Kartenzahlung" is not "Karte"), and four digits that begin a date ("Card
# payment 2026-10-25") are the date's year, not a card's ending.
CARD_ENDING = re.compile(
    r"\b(?:karte|card|visa|mastercard|maestro|amex|debit|kk)\b\D{0,12}?(?:[x*•.]{2,}\s*)?"
    r"(\d{4})\b(?![-./]\d)"
    r"|[x*•]{4,}[\s-]?(\d{4})\b(?![-./]\d)",
    re.I,
)


@functools.lru_cache(maxsize=65536)
def normalise(name: str) -> str:
    """The comparable form of a merchant name: folded, processor prefix, legal form, numbers,
    punctuation and noise words removed."""
    # The bank's transliteration ('MUELLER', 'SUED') and the receipt's umlauts meet halfway.
    text = PROCESSOR_PREFIX.sub(" ", name.translate(TRANSLITERATE))
    text = name_core(MORE_LEGAL_FORMS.sub(" ", text))
    text = NOISE_WORDS.sub(" ", text)
    text = DIGITS.sub(" ", fold(text))
    return " ".join(NON_WORD.sub(" ", text).split())


@functools.lru_cache(maxsize=262144)
def similarity(left: str, right: str) -> float:
    """0–100: how alike two normalised names are (rapidfuzz's WRatio, which scores a name
    inside a longer booking text at 90: 'shell deutschland oil' ~ 'shell'). Cached: a
    statement books the same few merchants again and again."""
    if not left or not right:
        return 0.0
    score = float(fuzz.WRatio(left, right))
    short, long = sorted((left, right), key=len)
    if len(short) < SHORT_NAME and short != long:
        words = long.split()
        if short in words:
            return min(score, 90.0)
        if any(word.startswith(short) for word in words):
            return min(score, SHORT_PREFIX)  # 'EDE' of 'EDEKA': a cut name, weak evidence
        return min(score, float(fuzz.ratio(short, long)))
    return score


def card_ending(text: str) -> str | None:
    """The card's last four digits a booking text names, if it names them."""
    found = CARD_ENDING.search(text)
    if found is None:
        return None
    return found.group(1) or found.group(2)


@functools.lru_cache(maxsize=65536)
def compact(text: str) -> str:
    """Letters and digits only, upper case: invoice numbers compared across punctuation."""
    return NON_WORD.sub("", fold(text)).upper()
