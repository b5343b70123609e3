"""A sentence in plain language → a rule draft (a dict for ``schema.rules.RuleDefinition``).

Three stages, no network:

1. ``tokenize``: words, numbers, amounts with currency symbols, e-mail addresses, URLs, times
   and quoted names, then phrases of the dictionary (``lexicon.py``), longest first; fillers
   are dropped, every other word is a word of a name.
2. The lark grammar (``grammar.py``) parses the token line. When it cannot, the token where it
   stopped is set aside as not understood and the rest is parsed again, so a sentence with an
   unknown part still yields what it says clearly, and the answer names what was left out.
3. ``_Reader`` walks the tree and assembles trigger, conditions (a where clause for
   ``persistence/where.py``) and actions; a rule about bank transactions gets its trigger and
   its where clause over the transactions' fields from ``transactions.py``.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from engines.rules.grammar import grammar
from engines.rules.lexicon import (
    CATEGORY_NAMES,
    CITY_NAMES,
    COUNTRY_NAMES,
    CURRENCY_WORDS,
    FILLERS,
    FREQUENCIES,
    INTEGRATIONS,
    PHRASES,
)
from engines.rules.patterns import merchant_pattern
from engines.rules.transactions import transaction_rule

MAX_PHRASE_WORDS = 6
# Earley parses grow fast with length and ambiguity: a segment reads at most this many pieces,
# and a sentence gets this many seconds of its thread's CPU in all. CPU, not the wall clock: the
# work a sentence may cost is the same on a busy machine as on a quiet one (counted on the wall
# clock, a sentence read whole in 0.03 s of CPU was cut short in a suite at a load average of 8).
MAX_SEGMENT_PIECES = 32
PARSE_BUDGET_S = 1.0
NAME_LENGTH = 80

_RAW = re.compile(
    r"""
    (?P<url>https?://[^\s,;"'<>]+[^\s,;"'<>.])
  | (?P<emailaddr>[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})
  | (?P<q>"[^"]{1,200}"|“[^”]{1,200}”|(?<![\w])'[^']{1,200}'(?![\w]))
  | (?P<time>\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)(?![\w])
      |\b\d{1,2}:\d{2}\b|\bnoon\b|\bmidnight\b)
  | (?P<ordinal>\b\d{1,2}(?:st|nd|rd|th)\b)
  | (?P<num>\d{1,3}(?:[,.\u00a0']\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d+(?:[.,]\d{1,2})?(?!\d))
  | (?P<word>[^\W\d_](?:[\w&'’.\-]*\w)?|\w+)
  | (?P<symbol>>=|<=|[$€£¥₹]|[,;:.&/=<>])
    """,
    re.VERBOSE | re.IGNORECASE,
)
_ORDINAL_WORDS = {"first": 1, "second": 2, "third": 3, "last": 28}


@dataclass(frozen=True)
class Piece:
    """One token of the sentence: its kind (a grammar terminal), its text and its value."""

    kind: str
    text: str
    start: int
    end: int
    value: Any = None


@dataclass
class RuleDraft:
    """What the grammar read: ``rule`` (a dict for ``RuleDefinition``, or None when no action
    was found), the parts of the sentence it did not understand, and its assumptions."""

    rule: dict[str, Any] | None
    not_understood: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


# -- 1. tokens -----------------------------------------------------------------------------


def _raw_pieces(text: str) -> list[tuple[str, str, int, int]]:
    pieces = []
    for match in _RAW.finditer(text):
        kind = match.lastgroup or "word"
        pieces.append((kind, match.group(), match.start(), match.end()))
    return pieces


def _phrase_tables() -> list[tuple[dict[str, Any], str]]:
    return [
        (CURRENCY_WORDS, "cur"),
        (COUNTRY_NAMES, "countryname"),
        (CITY_NAMES, "cityname"),
    ]


def tokenize(text: str) -> list[Piece]:
    """The sentence as grammar tokens (fillers dropped)."""
    raw = _raw_pieces(text)
    pieces: list[Piece] = []
    index = 0
    while index < len(raw):
        kind, chunk, start, end = raw[index]
        if kind in ("url", "emailaddr", "time", "ordinal"):
            value: Any = chunk.rstrip(".") if kind == "url" else chunk
            if kind == "time":
                value = _hour(chunk)
            elif kind == "ordinal":
                value = int(re.sub(r"\D", "", chunk))
            pieces.append(Piece(kind, chunk, start, end, value))
            index += 1
            continue
        if kind == "q":
            pieces.append(Piece("q", chunk, start, end, chunk[1:-1].strip()))
            index += 1
            continue
        if kind == "num":
            pieces.append(Piece("num", chunk, start, end, _number(chunk)))
            index += 1
            continue
        matched = _longest_phrase(raw, index)
        if matched is not None:
            count, piece_list = matched
            pieces.extend(piece_list)
            index += count
            continue
        word = chunk.lower()
        if word in FILLERS:
            index += 1
            continue
        if word in _ORDINAL_WORDS:
            pieces.append(Piece("ordinal", chunk, start, end, _ORDINAL_WORDS[word]))
        else:
            pieces.append(Piece("w", chunk, start, end, chunk))
        index += 1
    return pieces


def _longest_phrase(
    raw: list[tuple[str, str, int, int]], index: int
) -> tuple[int, list[Piece]] | None:
    for count in range(min(MAX_PHRASE_WORDS, len(raw) - index), 0, -1):
        window = raw[index : index + count]
        if any(kind not in ("word", "symbol") for kind, *_ in window):
            continue
        phrase = " ".join(chunk.lower() for _, chunk, _, _ in window)
        start, end = window[0][2], window[-1][3]
        text = " ".join(chunk for _, chunk, _, _ in window)
        for table, kind in _phrase_tables():
            if phrase in table:
                return count, [Piece(kind, text, start, end, table[phrase])]
        keywords = PHRASES.get(phrase)
        if keywords is None:
            continue
        if keywords == ("integ",):
            return count, [Piece("integ", text, start, end, INTEGRATIONS[phrase])]
        if keywords == ("freq",):
            return count, [Piece("freq", text, start, end, FREQUENCIES[phrase])]
        if keywords == ("weekday",):
            return count, [Piece("weekday", text, start, end, phrase.rstrip("s"))]
        return count, [Piece(keyword, text, start, end) for keyword in keywords]
    return None


def _number(chunk: str) -> Decimal | None:
    text = chunk.replace("\u00a0", "").replace("'", "")
    if "," in text and "." in text:
        decimal_mark = "," if text.rfind(",") > text.rfind(".") else "."
        thousands = "." if decimal_mark == "," else ","
        text = text.replace(thousands, "").replace(decimal_mark, ".")
    elif "," in text or "." in text:
        mark = "," if "," in text else "."
        head, _, tail = text.rpartition(mark)
        if len(tail) == 3 and text.count(mark) >= 1 and len(head.replace(mark, "")) <= 3 * 5:
            text = text.replace(mark, "")  # 1,000 or 1.000: thousands
        else:
            text = head.replace(mark, "") + "." + tail
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _hour(chunk: str) -> int:
    text = chunk.lower().replace(".", "").replace(" ", "")
    if text == "noon":
        return 12
    if text == "midnight":
        return 0
    match = re.match(r"(\d{1,2})(?::(\d{2}))?(am|pm)?", text)
    hour = int(match.group(1)) if match else 0
    if match and match.group(3) == "pm" and hour < 12:
        hour += 12
    if match and match.group(3) == "am" and hour == 12:
        hour = 0
    return hour % 24


# -- 2. the grammar, with recovery ---------------------------------------------------------


@lru_cache(maxsize=1)
def _parser() -> Lark:
    return Lark(grammar(), parser="earley", lexer="basic", ambiguity="resolve")


def _line(pieces: list[Piece], keep: list[int]) -> tuple[str, list[int]]:
    """The token line of the kept pieces and the character offset of each in it."""
    parts, offsets, at = [], [], 0
    for position in keep:
        word = f"t_{pieces[position].kind}_{position}"
        offsets.append(at)
        parts.append(word)
        at += len(word) + 1
    return " ".join(parts), offsets


@dataclass
class Parsed:
    """The trees of the segments the grammar read, the positions it set aside, and whether
    it stopped early (length or time)."""

    trees: list[Tree] = field(default_factory=list)
    dropped: list[int] = field(default_factory=list)
    cut_short: bool = False


def segments(pieces: list[Piece]) -> list[list[int]]:
    """Positions of the pieces, split at sentence breaks ("." "then" "also"): each part is
    parsed on its own (the meaning of a sentence is the sum of its phrases), which keeps every
    parse small."""
    parts: list[list[int]] = [[]]
    for position, piece in enumerate(pieces):
        if piece.kind == "then":
            parts.append([])
        else:
            parts[-1].append(position)
    return [part for part in parts if part]


def parse_pieces(
    pieces: list[Piece],
    budget_s: float = PARSE_BUDGET_S,
    clock: Callable[[], float] = time.thread_time,
) -> Parsed:
    """Parse each segment; a piece where the grammar cannot go on is set aside and the segment
    parsed again. Beyond ``MAX_SEGMENT_PIECES`` pieces a segment's rest, and every segment once
    ``budget_s`` seconds have passed on ``clock`` (the thread's CPU time), are set aside
    unread."""
    parsed = Parsed()
    # The grammar is built on a process's first reading (a second or more on a loaded machine):
    # before the budget starts, or that first sentence would be set aside unread.
    parser = _parser()
    deadline = clock() + budget_s
    for part in segments(pieces):
        keep = part[:MAX_SEGMENT_PIECES]
        if len(part) > len(keep):
            parsed.dropped.extend(part[len(keep) :])
            parsed.cut_short = True
        while keep:
            if clock() > deadline:
                parsed.dropped.extend(keep)
                parsed.cut_short = True
                break
            line, offsets = _line(pieces, keep)
            try:
                parsed.trees.append(parser.parse(line))
                break
            except UnexpectedInput as error:
                for at in sorted(_failed_at(error, offsets, pieces, keep), reverse=True):
                    parsed.dropped.append(keep.pop(at))
    parsed.dropped.sort()
    return parsed


def _failed_at(
    error: UnexpectedInput, offsets: list[int], pieces: list[Piece], keep: list[int]
) -> list[int]:
    """Indexes (among the kept pieces) to set aside: the token where the parse could not go
    on; at the end of the line, the unfinished name there (or else the last token)."""
    if isinstance(error, UnexpectedEOF):
        last = len(keep) - 1
        run = last
        while run >= 0 and pieces[keep[run]].kind in ("w", "q"):
            run -= 1
        return list(range(run + 1, last + 1)) if run < last else [last]
    position: int | None = None
    if isinstance(error, UnexpectedToken):
        position = error.token.start_pos
    elif isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream
    if position is None:
        return [len(offsets) - 1]
    index = 0
    for i, offset in enumerate(offsets):
        if offset <= position:
            index = i
    return [index]


# -- 3. meaning ----------------------------------------------------------------------------


class _Reader:
    """Walks a parse tree and collects what the sentence says."""

    def __init__(self, pieces: list[Piece]) -> None:
        self.pieces = pieces
        self.merchants: list[str] = []
        self.senders: list[str] = []
        self.doc_types: list[str] = []
        self.conditions: list[dict[str, Any]] = []
        self.currencies: list[str] = []
        self.countries: list[str] = []
        self.cities: list[str] = []
        self.actions: list[dict[str, Any]] = []
        self.triggers: list[dict[str, Any]] = []
        self.hour: int | None = None
        self.warnings: list[str] = []
        # "Transactions from Shell …": the rule is about bank transactions (transaction-matched).
        self.transactions = False

    # tokens and names

    def piece(self, token: Token) -> Piece:
        return self.pieces[int(str(token).rsplit("_", 1)[1])]

    def tokens(self, tree: Tree) -> list[Piece]:
        return [self.piece(child) for child in tree.children if isinstance(child, Token)]

    def kinds(self, tree: Tree) -> list[str]:
        return [piece.kind for piece in self.tokens(tree)]

    def name(self, tree: Tree) -> str:
        words = [self.piece(t) for t in tree.children if isinstance(t, Token)]
        if len(words) == 1 and words[0].kind == "q":
            return str(words[0].value)
        return " ".join(piece.text for piece in words)

    def names(self, tree: Tree) -> list[str]:
        return [self.name(child) for child in tree.children if isinstance(child, Tree)]

    def child(self, tree: Tree, data: str) -> Tree | None:
        for child in tree.children:
            if isinstance(child, Tree) and child.data == data:
                return child
        return None

    def target(self, tree: Tree) -> str:
        found = self.child(tree, "target")
        assert found is not None
        name = self.child(found, "name")
        assert name is not None
        return self.name(name)

    # the walk

    def read(self, tree: Tree) -> None:
        for node in tree.iter_subtrees_topdown():
            handler = getattr(self, f"on_{node.data}", None)
            if handler is not None:
                handler(node)

    def on_subject(self, node: Tree) -> None:
        names = self.child(node, "names")
        if names is not None:
            self.merchants.extend(self.names(names))
        for child in node.children:
            if not isinstance(child, Tree):
                continue
            if child.data == "doc_nouns":
                for noun in child.children:
                    if isinstance(noun, Tree):
                        kind = self.kinds(noun)[0]
                        if kind in ("receipt", "invoice"):
                            self.doc_types.append(kind)
                        elif kind == "recurring":
                            self._recurring(None)
            elif child.data == "txn_nouns":
                self.transactions = True
            elif child.data == "payee":
                self.on_cond_merchant(child)
            elif child.data == "recurring_adj":
                freq = [p for p in self.tokens(child) if p.kind == "freq"]
                self._recurring(freq[0].value if freq else None)
            elif child.data == "unpaid":
                self.on_cond_unpaid(child)
            elif child.data == "uncategorized":
                self.on_cond_uncategorized(child)
            elif child.data == "currency":
                self.currencies.append(self.tokens(child)[0].value)

    def _recurring(self, frequency: str | None) -> None:
        self._condition("isRecurring", "eq", True)
        if frequency is not None:
            self._condition("recurringType", "eq", frequency)

    def _condition(self, field_name: str, op: str, value: Any) -> None:
        condition = {"field": field_name, "op": op, "value": value}
        if condition not in self.conditions:
            self.conditions.append(condition)

    def on_cond_merchant(self, node: Tree) -> None:
        names = self.child(node, "names")
        if names is not None:
            self.merchants.extend(self.names(names))

    def on_bare(self, node: Tree) -> None:
        self.on_cond_merchant(node)

    def on_rename_from(self, node: Tree) -> None:
        names = self.child(node, "names")
        if names is not None:
            self.merchants.extend(self.names(names))

    def on_cond_sender(self, node: Tree) -> None:
        self.senders.extend(p.value or p.text for p in self.tokens(node) if p.kind == "emailaddr")

    def on_cond_amount(self, node: Tree) -> None:
        monies = [
            self._money(m) for m in node.children if isinstance(m, Tree) and m.data == "money"
        ]
        kinds = self.kinds(node)
        comparison = self.child(node, "comparison")
        if "between" in kinds and len(monies) == 2:
            low, high = sorted((monies[0], monies[1]))
            self._condition("amount", "gte", low)
            self._condition("amount", "lte", high)
        elif comparison is not None and monies:
            self._condition("amount", self.kinds(comparison)[0], monies[0])
        elif monies and ("gte" in kinds or "lte" in kinds):
            self._condition("amount", "gte" if "gte" in kinds else "lte", monies[0])
        elif monies:
            self._condition("amount", "eq", monies[0])

    def _money(self, node: Tree) -> float:
        amount: Decimal | None = None
        for piece in self.tokens(node):
            if piece.kind == "num":
                amount = piece.value
            elif piece.kind == "cur":
                self.currencies.append(piece.value)
        if amount is None:
            amount = Decimal(0)
        return float(amount.quantize(Decimal("0.01")))

    def on_cond_currency(self, node: Tree) -> None:
        self.currencies.extend(p.value for p in self.tokens(node) if p.kind == "cur")

    def on_cond_country(self, node: Tree) -> None:
        self.countries.extend(p.value for p in self.tokens(node) if p.kind == "countryname")

    def on_cond_city(self, node: Tree) -> None:
        self.cities.extend(p.value for p in self.tokens(node) if p.kind == "cityname")

    def on_cond_category(self, node: Tree) -> None:
        self._condition("category", "eq", category_name(self.target(node)))

    def on_cond_tag(self, node: Tree) -> None:
        self._condition("tags", "eq", self.target(node))

    def on_cond_uncategorized(self, node: Tree) -> None:
        self._condition("category", "exists", False)

    def on_cond_unpaid(self, node: Tree) -> None:
        self._condition("paymentStatus", "eq", "unpaid")

    def on_cond_ending(self, node: Tree) -> None:
        number = next(p for p in self.tokens(node) if p.kind == "num")
        self._condition("paymentMethodEnding", "eq", re.sub(r"\D", "", number.text))

    # actions

    def _action(self, action: dict[str, Any]) -> None:
        if action not in self.actions:
            self.actions.append(action)

    def on_categorize(self, node: Tree) -> None:
        self._action({"type": "set-category", "category": category_name(self.target(node))})

    def on_copula(self, node: Tree) -> None:
        self.on_categorize(node)

    def on_add_tag(self, node: Tree) -> None:
        self._action({"type": "add-tag", "tag": self.target(node)})

    def on_set_category(self, node: Tree) -> None:
        self.on_categorize(node)

    def on_set_merchant(self, node: Tree) -> None:
        self._action({"type": "set-merchant", "merchant": self.target(node)})

    def on_rename(self, node: Tree) -> None:
        self.on_set_merchant(node)

    def on_mark_recurring(self, node: Tree) -> None:
        freq = [p.value for p in self.tokens(node) if p.kind == "freq"]
        if not freq:
            self.warnings.append(
                "No frequency was named; the rule marks documents as monthly recurring."
            )
        self._action({"type": "mark-recurring", "recurringType": freq[0] if freq else "monthly"})

    def on_archive(self, node: Tree) -> None:
        self._action({"type": "archive"})

    def on_send(self, node: Tree) -> None:
        integration = next(p.value for p in self.tokens(node) if p.kind == "integ")
        self._action({"type": "send-to-integration", "integration": integration})

    def on_require_approval(self, node: Tree) -> None:
        self._action({"type": "require-approval"})

    def on_notify_email(self, node: Tree) -> None:
        addresses = [p.text for p in self.tokens(node) if p.kind == "emailaddr"]
        recipient = self.child(node, "recipient")
        if recipient is not None:
            for piece in self.tokens(recipient):
                addresses.append(piece.text if piece.kind == "emailaddr" else "me")
        for address in dict.fromkeys(addresses):
            self._action({"type": "notify-email", "email": address})

    def on_notify_webhook(self, node: Tree) -> None:
        for piece in self.tokens(node):
            if piece.kind == "url":
                self._action({"type": "notify-webhook", "url": piece.value})

    # triggers

    def on_on_processed(self, node: Tree) -> None:
        self.triggers.append({"type": "document-processed"})

    def on_on_updated(self, node: Tree) -> None:
        self.triggers.append({"type": "document-updated"})

    def on_schedule(self, node: Tree) -> None:
        pieces = self.tokens(node)
        kinds = [p.kind for p in pieces]
        period = self.child(node, "period")
        schedule: dict[str, Any] = {"frequency": "daily"}
        if period is not None:
            unit = self.tokens(period)[0]
            if unit.kind == "week":
                schedule = {"frequency": "weekly", "weekday": "monday"}
            elif unit.kind == "weekday":
                schedule = {"frequency": "weekly", "weekday": unit.value}
            elif unit.kind == "month":
                schedule = {"frequency": "monthly", "dayOfMonth": 1}
        elif "weekday" in kinds:
            weekday = next(p for p in pieces if p.kind == "weekday")
            schedule = {"frequency": "weekly", "weekday": weekday.value}
        elif "ordinal" in kinds:
            ordinal = next(p for p in pieces if p.kind == "ordinal")
            day = int(ordinal.value)
            if day > 28:
                self.warnings.append("Monthly rules run on day 28 at the latest.")
            schedule = {"frequency": "monthly", "dayOfMonth": min(max(day, 1), 28)}
        elif "freq" in kinds or self.child(node, "freq_schedule") is not None:
            schedule = self._frequency_schedule(node, pieces)
        at_time = self.child(node, "at_time")
        if at_time is not None:
            self.hour = int(self.tokens(at_time)[-1].value)
        self.triggers.append({"type": "schedule", "schedule": schedule})

    def _frequency_schedule(self, node: Tree, pieces: list[Piece]) -> dict[str, Any]:
        """ "Monthly", "weekly on Friday at 9am", "run daily"."""
        inner = self.child(node, "freq_schedule")
        found = self.tokens(inner) if inner is not None else pieces
        weekdays = [p for p in found if p.kind == "weekday"]
        if inner is not None:
            at_time = self.child(inner, "at_time")
            if at_time is not None:
                self.hour = int(self.tokens(at_time)[-1].value)
        if weekdays:
            return {"frequency": "weekly", "weekday": weekdays[0].value}
        frequency = next(p for p in found if p.kind == "freq").value
        if frequency not in ("daily", "weekly", "monthly"):
            self.warnings.append(f"Rules run daily, weekly or monthly; {frequency} runs monthly.")
            frequency = "monthly"
        return {"frequency": frequency}

    # the rule

    def trigger(self) -> dict[str, Any]:
        scheduled = [t for t in self.triggers if t["type"] == "schedule"]
        chosen = scheduled[0] if scheduled else (self.triggers[0] if self.triggers else None)
        if chosen is None:
            return {"type": "document-processed"}
        kinds = {t["type"] for t in self.triggers}
        if len(kinds) > 1:
            self.warnings.append(
                f"The sentence names several triggers; the rule uses {chosen['type']}."
            )
        if chosen["type"] == "schedule":
            schedule = {"hour": self.hour if self.hour is not None else 6, **chosen["schedule"]}
            if self.hour is not None:
                schedule["hour"] = self.hour
            return {"type": "schedule", "schedule": schedule}
        return chosen

    def where(self) -> dict[str, Any] | None:
        conditions: list[dict[str, Any]] = []
        if self.merchants:
            conditions.append(
                {"field": "merchant", "op": "regex", "value": merchant_pattern(self.merchants)}
            )
        for values, field_name in (
            (self.senders, "fromEmail"),
            (sorted(set(self.doc_types), key=self.doc_types.index), "docType"),
            (list(dict.fromkeys(self.currencies)), "currency"),
            (list(dict.fromkeys(self.countries)), "expenseLocation.primary.countryCode"),
        ):
            values = list(dict.fromkeys(values))
            if len(values) == 1:
                conditions.append({"field": field_name, "op": "eq", "value": values[0]})
            elif values:
                conditions.append({"field": field_name, "op": "in", "value": values})
        if self.cities:
            conditions.append(
                {
                    "field": "expenseLocation.primary.city",
                    "op": "regex",
                    "value": merchant_pattern(dict.fromkeys(self.cities)),
                }
            )
        conditions.extend(self.conditions)
        return {"logic": "and", "conditions": conditions} if conditions else None


def category_name(written: str) -> str:
    """The taxonomy's spelling of a category people wrote, else their words in title case."""
    known = CATEGORY_NAMES.get(written.lower().strip())
    if known:
        return known
    return written if any(c.isupper() for c in written) else written.title()


def rule_name(sentence: str) -> str:
    text = " ".join(sentence.split()).rstrip(".!")
    text = text[:1].upper() + text[1:]
    if len(text) <= NAME_LENGTH:
        return text
    return text[: NAME_LENGTH - 1].rsplit(" ", 1)[0] + "…"


def _spans(sentence: str, pieces: list[Piece], dropped: list[int]) -> list[str]:
    """The dropped pieces as phrases of the sentence (neighbours joined)."""
    spans: list[list[int]] = []
    for position in dropped:
        if spans and spans[-1][-1] == position - 1:
            spans[-1].append(position)
        else:
            spans.append([position])
    return [sentence[pieces[s[0]].start : pieces[s[-1]].end] for s in spans]


def read_rule(sentence: str) -> RuleDraft:
    """What the grammar makes of ``sentence``: a rule draft (not yet validated).

    Readings are cached (a preview and the execute that follows read the same sentence); the
    caller gets its own copy to change.
    """
    return copy.deepcopy(_read_rule(sentence))


@lru_cache(maxsize=256)
def _read_rule(sentence: str) -> RuleDraft:
    pieces = tokenize(sentence)
    if not pieces:
        return RuleDraft(None, [sentence.strip()] if sentence.strip() else [])
    parsed = parse_pieces(pieces)
    reader = _Reader(pieces)
    for tree in parsed.trees:
        reader.read(tree)
    if parsed.cut_short:
        reader.warnings.append(
            "The sentence is long: only its first part was read (rules read best as one "
            "short sentence per rule)."
        )
    not_understood = _spans(sentence, pieces, parsed.dropped)
    if reader.transactions and reader.actions:
        return _transaction_draft(sentence, reader, not_understood)
    if not reader.actions:
        return RuleDraft(None, not_understood or [sentence.strip()], reader.warnings)
    if reader.currencies and not any(c["field"] == "amount" for c in reader.conditions):
        pass  # "in EUR" alone: a currency condition, nothing to explain
    elif any(c["field"] == "amount" for c in reader.conditions) and not reader.currencies:
        reader.warnings.append(
            "No currency was named: amounts are compared in each document's own currency."
        )
    conditions = reader.where()
    if conditions is None:
        reader.warnings.append("The rule names no conditions: it applies to every document.")
    rule = {
        "name": rule_name(sentence),
        "trigger": reader.trigger(),
        "conditions": conditions,
        "actions": reader.actions,
    }
    return RuleDraft(rule, not_understood, reader.warnings)


def _transaction_draft(sentence: str, reader: _Reader, not_understood: list[str]) -> RuleDraft:
    trigger, conditions = transaction_rule(reader)
    if not reader.actions:
        return RuleDraft(None, not_understood or [sentence.strip()], reader.warnings)
    if any(c["field"] == "amount" for c in reader.conditions) and not reader.currencies:
        reader.warnings.append(
            "No currency was named: amounts are compared in each transaction's own currency."
        )
    if conditions is None:
        reader.warnings.append(
            "The rule names no conditions: it applies to every transaction matched."
        )
    rule = {
        "name": rule_name(sentence),
        "trigger": trigger,
        "conditions": conditions,
        "actions": reader.actions,
    }
    return RuleDraft(rule, not_understood, reader.warnings)


__all__ = [
    "RuleDraft",
    "category_name",
    "merchant_pattern",
    "read_rule",
    "tokenize",
]
