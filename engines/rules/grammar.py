"""The grammar of the rule language (lark, Earley).

The parser does not read the sentence itself: ``engines/rules/parser.py`` first turns it into
a line of tokens, one per word or phrase of the dictionary (``engines/rules/lexicon.py``), each
written ``t_<kind>_<position>`` so the parse tree leads back to the words. The grammar then says
how those tokens make a rule. A sentence is a sequence of phrases in any order — actions
("categorize … as Travel"), conditions ("over 100 EUR"), subjects ("all Uber and Bolt
receipts") and triggers ("when … arrives", "every Monday") — because people put them in any
order; what they mean together is assembled from the tree.
"""

from __future__ import annotations

# Terminals: one per token kind of the lexicon (keywords) plus the kinds that carry a value.
KEYWORDS = [
    "when",
    "arrive",
    "updated",
    "on",
    "upload",
    "update",
    "every",
    "day",
    "week",
    "month",
    "run",
    "weekday",
    "freq",
    "categorize",
    "categorizeas",
    "categorized",
    "tag",
    "tagged",
    "set",
    "rename",
    "category",
    "merchant",
    "mark",
    "recurring",
    "archive",
    "send",
    "requireapproval",
    "notify",
    "email",
    "webhook",
    "call",
    "me",
    "from",
    "at",
    "in",
    "gt",
    "gte",
    "lt",
    "lte",
    "between",
    "amount",
    "is",
    "currency",
    "country",
    "city",
    "receipt",
    "invoice",
    "document",
    "transaction",
    "unpaid",
    "uncategorized",
    "ending",
    "and",
    "or",
    "comma",
    "then",
    "as",
    "to",
    "integ",
]
VALUED = ("w", "q", "num", "cur", "countryname", "cityname", "emailaddr", "url", "time", "ordinal")

RULES = r"""
start: (_phrase | _sep)+

_sep: AND | OR | COMMA | THEN
_phrase: action | condition | subject | trigger | WHEN

// -- actions ---------------------------------------------------------------------------
?action: categorize | set_category | set_merchant | rename | mark_recurring | archive
       | add_tag | send | require_approval | notify_email | notify_webhook | copula

categorize: (CATEGORIZE | MARK) span? (AS | TO | IN) target
          | (CATEGORIZE | MARK)? span? CATEGORIZEAS target
set_category: SET CATEGORY span? (TO | AS) target
            | SET span CATEGORY (TO | AS) target
set_merchant: SET MERCHANT span? (TO | AS) target
            | SET span MERCHANT (TO | AS) target
rename: RENAME MERCHANT? rename_from (TO | AS) target
      | RENAME span (TO | AS) target
rename_from: names
mark_recurring: (MARK | CATEGORIZE) span? AS? FREQ? RECURRING FREQ?
              | (MARK | CATEGORIZE) span? AS FREQ
archive: ARCHIVE span?
add_tag: TAG span? AS? target
// "Transactions from Shell are Fuel", "Uber receipts are Travel": a category, said of a subject.
copula: subject condition* IS target
send: SEND span? TO? INTEG
require_approval: MARK? span? REQUIREAPPROVAL span?
notify_email: EMAIL span? TO? recipient
            | NOTIFY recipient EMAIL?
            | NOTIFY span? TO? recipient EMAIL?
            | SEND EMAIL span? TO? recipient
            | SEND span? TO EMAILADDR
            | NOTIFY recipient AT EMAILADDR
            | EMAIL recipient
notify_webhook: (NOTIFY | SEND | CALL) span? TO? WEBHOOK? URL
              | CALL WEBHOOK AT? URL
recipient: EMAILADDR | ME
target: name

// -- what a rule applies to -------------------------------------------------------------
span: subject condition* | condition+ | bare condition*
bare: names

subject: EVERY? _adjective* names? _adjective* doc_nouns
       | EVERY? names? txn_nouns payee?
doc_nouns: doc_noun ((AND | OR | COMMA) doc_noun)*
doc_noun: RECEIPT | INVOICE | DOCUMENT | RECURRING
// Bank transactions: "card payments to Uber" names the counterparty with "to".
txn_nouns: TRANSACTION ((AND | OR | COMMA) TRANSACTION)*
payee: TO names
_adjective: recurring_adj | unpaid | uncategorized | currency
unpaid: UNPAID
uncategorized: UNCATEGORIZED
currency: CUR
recurring_adj: FREQ RECURRING? | RECURRING

?condition: cond_merchant | cond_sender | cond_amount | cond_currency | cond_country
          | cond_city | cond_category | cond_uncategorized | cond_unpaid | cond_ending
          | cond_tag
cond_merchant: (FROM | AT) names
             | MERCHANT IS? names
cond_sender: FROM EMAILADDR
cond_amount: AMOUNT? IS? comparison money
           | AMOUNT? IS? BETWEEN money AND money
           | AMOUNT IS? money
           | money (GTE | LTE)
comparison: GT | GTE | LT | LTE
money: CUR? NUM CUR?
cond_currency: IN CUR
             | CURRENCY IS? CUR
cond_country: (FROM | IN) COUNTRYNAME
            | COUNTRY IS? COUNTRYNAME
cond_city: (FROM | IN | AT) CITYNAME
         | CITY IS? CITYNAME
cond_category: IN target CATEGORY
             | CATEGORY IS? target
             | CATEGORIZED target
             | IN CATEGORY target
cond_uncategorized: UNCATEGORIZED
cond_tag: TAGGED target
cond_unpaid: UNPAID
cond_ending: ENDING NUM

names: name ((AND | OR | COMMA) name)*
name: Q | W+

// -- when it runs -------------------------------------------------------------------------
trigger: WHEN span? ARRIVE -> on_processed
       | (ON | WHEN) EVERY? (UPLOAD | ARRIVE) -> on_processed
       | WHEN span? UPDATED -> on_updated
       | (ON | WHEN) EVERY? UPDATE -> on_updated
       | schedule
schedule: EVERY period at_time?
        | ON WEEKDAY at_time?
        | ON ORDINAL EVERY? MONTH at_time?
        | EVERY MONTH ON ORDINAL at_time?
        | RUN EVERY? FREQ at_time?
        | freq_schedule
freq_schedule.-1: FREQ (ON WEEKDAY)? at_time?
        | at_time
period: DAY | WEEK | MONTH | WEEKDAY
at_time: AT TIME

%ignore " "
"""


def grammar() -> str:
    """The complete grammar: the rules above and one terminal per token kind."""
    terminals = [f"{kind.upper()}: /t_{kind}_\\d+/" for kind in (*KEYWORDS, *VALUED)]
    return RULES + "\n".join(terminals) + "\n"
