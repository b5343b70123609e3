"""The rule language's dictionary: which words and phrases mean the same thing.

Every phrase (lower case, words separated by one space) maps to the grammar's keywords
(``engines/rules/grammar.py``); the longest phrase wins, so "more than" is one comparison and
"by email" is the email channel rather than "by" (a merchant) and "email". Words listed as
fillers carry no meaning of their own and are dropped; every other word that is not here is a
word of a name (a merchant, a category) or, when the grammar cannot place it, something the
rule did not understand.
"""

from __future__ import annotations

from engines.extraction.categorization import TAXONOMY
from engines.extraction.fields.countries import COUNTRIES


def _many(keywords: str, *phrases: str) -> dict[str, tuple[str, ...]]:
    names = tuple(keywords.split())
    return {phrase: names for phrase in phrases}


PHRASES: dict[str, tuple[str, ...]] = {
    # -- triggers ------------------------------------------------------------------------
    **_many("when", "when", "whenever", "if", "once", "as soon as", "each time", "every time",
            "any time", "anytime", "after", "upon"),
    **_many(
        "arrive",
        "arrives", "arrive", "arrived", "comes in", "come in", "is received", "are received",
        "gets received", "is uploaded", "are uploaded", "gets uploaded", "get uploaded",
        "is processed", "are processed", "gets processed", "is added", "are added", "is created",
        "are created", "lands", "land", "is scanned", "are scanned", "is imported", "shows up",
        "show up", "appears", "appear", "is submitted", "are submitted", "is extracted",
        "are extracted",
    ),
    **_many(
        "updated",
        "is updated", "are updated", "gets updated", "get updated", "is edited", "are edited",
        "gets edited", "is changed", "are changed", "gets changed", "is corrected",
        "are corrected", "gets corrected", "is modified", "are modified", "updated", "edited",
        "corrected", "modified",
    ),
    **_many("on", "on"),
    **_many("upload", "upload", "uploads", "arrival", "arrivals", "processing", "import", "ingest"),
    **_many("update", "update", "updates", "edit", "edits", "correction", "corrections",
            "change of", "modification"),
    **_many("every", "every", "each", "once a", "once an", "once per", "once every", "per"),
    **_many("day", "day", "days", "night", "evening", "morning", "mornings"),
    **_many("week", "week", "weeks"),
    **_many("month", "month", "months"),
    **_many("run", "run", "runs", "running", "sweep"),
    **{f"{day}": ("weekday",) for day in (
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
        "mondays", "tuesdays", "wednesdays", "thursdays", "fridays", "saturdays", "sundays",
    )},
    **_many("freq", "daily", "weekly", "monthly", "quarterly", "yearly", "annual", "annually",
            "per month", "per year", "per week"),
    # -- actions -------------------------------------------------------------------------
    **_many(
        "categorize",
        "categorize", "categorise", "categorized", "categorised", "classify", "class", "file",
        "put", "tag", "label", "book", "assign", "should be categorized", "be categorized",
        "be categorised", "get categorized", "be classified", "be filed", "be tagged",
        "be labeled", "be labelled", "be booked", "be put",
    ),
    **_many("categorize as", "file under", "file them under", "file it under", "book under",
            "be filed under"),
    **_many("categorized", "categorized as", "categorised as", "classified as",
            "filed under", "tagged as", "labeled as", "labelled as"),
    **_many("set", "set", "change", "make", "update the", "switch"),
    **_many("rename", "rename", "renames", "be renamed", "normalize", "normalise"),
    **_many("category", "category", "categories", "expense category", "expense type",
            "account category"),
    **_many("merchant", "merchant", "merchants", "vendor", "vendors", "supplier", "suppliers",
            "seller", "store", "shop", "payee", "merchant name", "vendor name",
            "supplier name", "store name", "name of the merchant"),
    **_many("mark", "mark", "flag", "treat", "be marked", "be flagged", "be treated",
            "consider"),
    **_many(
        "recurring",
        "recurring", "recurrent", "repeating", "repeat", "subscription", "subscriptions",
        "recurring payment", "recurring payments", "recurring expense", "recurring expenses",
        "recurring charge", "recurring charges", "recurring bill", "recurring bills",
        "subscription payment", "subscription payments", "standing order",
    ),
    **_many("archive", "archive", "delete", "remove", "discard", "trash", "hide", "dismiss",
            "be archived", "be deleted", "be removed", "get archived", "move to the archive",
            "move to archive", "send to the archive"),
    **_many("send", "send", "export", "push", "sync", "forward", "post", "transfer",
            "be sent", "be exported", "be pushed", "be synced", "get sent", "get exported",
            "upload to"),
    **_many("requireapproval",
            "require approval", "requires approval", "require an approval",
            "need approval", "needs approval", "ask for approval", "request approval",
            "needs to be approved", "need to be approved", "must be approved",
            "should be approved", "has to be approved", "have to be approved",
            "hold for approval", "hold for review", "send for approval", "route for approval",
            "get approval", "approval required", "require review", "requires review",
            "needs review", "need review", "require sign off", "require sign-off",
            "needs sign off", "needs sign-off", "require manager approval",
            "requires manager approval", "need manager approval", "needs manager approval",
            "must be reviewed", "should be reviewed", "goes to approval"),
    **_many("notify", "notify", "alert", "inform", "ping", "tell", "let know", "warn",
            "send a notification to", "send notification to", "notification to",
            "send an alert to", "be notified"),
    **_many("email", "email", "e-mail", "mail", "by email", "by e-mail", "via email",
            "via e-mail", "per email", "by mail", "an email", "an e-mail", "email notification",
            "an email notification"),
    **_many("webhook", "webhook", "web hook", "the webhook", "a webhook", "hook",
            "http endpoint", "endpoint", "url"),
    **_many("call", "call", "trigger", "invoke", "hit"),
    **_many("me", "me", "myself", "us"),
    # -- conditions and subjects -----------------------------------------------------------
    **_many("from", "from", "by", "issued by", "billed by", "sent by", "purchased at",
            "bought at", "paid to", "charged by", "made at", "spent at", "with merchant",
            "with vendor", "coming from", "received from"),
    **_many("at", "at"),
    **_many("in", "in", "paid in", "billed in", "charged in", "denominated in", "made in",
            "spent in", "located in", "within"),
    **_many("gt", "over", "above", "more than", "greater than", "exceeding", "exceeds",
            "exceed", "larger than", "bigger than", "higher than", "in excess of", "beyond",
            "greater", "more", ">"),
    **_many("gte", "at least", "minimum of", "min", "or more", "and more", "and above",
            "or above", "no less than", "not less than", ">="),
    **_many("lt", "under", "below", "less than", "lower than", "smaller than", "cheaper than",
            "beneath", "less", "<"),
    **_many("lte", "at most", "up to", "no more than", "not more than", "maximum of", "max",
            "or less", "and less", "and below", "or below", "<="),
    **_many("between", "between", "ranging from"),
    **_many("amount", "amount", "amounts", "total", "totals", "totaling", "totalling",
            "totaling over", "value", "worth", "costing", "cost", "costs", "priced at",
            "priced", "price", "sum", "amount due", "grand total"),
    **_many("is", "is", "are", "equals", "equal to", "=", "of exactly", "exactly", "is exactly"),
    **_many("currency", "currency"),
    **_many("country", "country"),
    **_many("city", "city"),
    **_many("receipt", "receipt", "receipts", "ticket", "tickets", "sales slip"),
    **_many("invoice", "invoice", "invoices", "bill", "bills", "vendor bill", "vendor bills"),
    **_many("document", "document", "documents", "anything", "everything", "expense",
            "expenses", "purchase", "purchases", "transaction", "transactions", "charge",
            "charges", "payment", "payments", "files", "item", "items", "one",
            "ones", "spend", "spending", "stuff"),
    **_many("unpaid", "unpaid", "outstanding", "not paid", "not yet paid", "open"),
    **_many("uncategorized", "uncategorized", "uncategorised", "without a category",
            "without category", "with no category", "no category", "missing a category"),
    **_many("ending", "ending", "ending in", "ending with", "ends in", "ends with",
            "card ending", "card ending in", "card ending with", "last four", "last 4 digits",
            "with last digits", "paid with card ending", "paid by card ending",
            "paid with a card ending in", "paid with card ending in"),
    **_many("and", "and", "&", "plus", "as well as"),
    **_many("or", "or", "/", "either"),
    **_many("comma", ",", ";", ":"),
    **_many("then", "then", "also", "and then", "and also", "."),
    **_many("as", "as", "as a", "as an", "to be", "into", "under the", "a category of"),
    **_many("to", "to", "towards", "onto"),
    **_many("integ", "xero", "quickbooks", "quickbooks online", "quick books", "qbo", "qb",
            "intuit quickbooks"),
}

# Words that say nothing the rule needs (dropped, and never reported as not understood).
FILLERS = frozenset(
    """
    the a an all any with please automatically auto always that which who whose it them they
    those these this its their my our your new incoming of for should will would shall
    must be been being just only kindly i we you can could do does please. so also's
    whatever someone somebody etc get gets got have has having one's there here now
    automatic automated rule apply applies applied also whose where are is
    """.split()
) - {"is", "are"}  # keywords ("the merchant is Uber"); phrases such as "is updated" win

# How each currency may be written: a word, a symbol or its ISO code.
CURRENCY_WORDS: dict[str, str] = {
    "eur": "EUR", "euro": "EUR", "euros": "EUR", "€": "EUR",
    "usd": "USD", "dollar": "USD", "dollars": "USD", "$": "USD", "us dollars": "USD",
    "us dollar": "USD", "bucks": "USD",
    "gbp": "GBP", "pound": "GBP", "pounds": "GBP", "£": "GBP", "sterling": "GBP",
    "pounds sterling": "GBP",
    "chf": "CHF", "swiss franc": "CHF", "swiss francs": "CHF", "francs": "CHF",
    "cad": "CAD", "canadian dollar": "CAD", "canadian dollars": "CAD",
    "aud": "AUD", "australian dollar": "AUD", "australian dollars": "AUD",
    "jpy": "JPY", "yen": "JPY", "¥": "JPY",
    "sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN", "zloty": "PLN",
    "czk": "CZK", "huf": "HUF", "inr": "INR", "rupees": "INR", "rupee": "INR", "₹": "INR",
    "sgd": "SGD", "myr": "MYR", "ringgit": "MYR", "cny": "CNY", "yuan": "CNY",
    "rmb": "CNY", "nzd": "NZD", "hkd": "HKD", "brl": "BRL", "mxn": "MXN", "zar": "ZAR",
    "krona": "SEK", "kronor": "SEK",
}
# Words that name an accounting product, by provider.
INTEGRATIONS: dict[str, str] = {
    "xero": "xero",
    "quickbooks": "quickbooks",
    "quickbooks online": "quickbooks",
    "quick books": "quickbooks",
    "qbo": "quickbooks",
    "qb": "quickbooks",
    "intuit quickbooks": "quickbooks",
}
FREQUENCIES: dict[str, str] = {
    "daily": "daily",
    "weekly": "weekly",
    "per week": "weekly",
    "monthly": "monthly",
    "per month": "monthly",
    "quarterly": "quarterly",
    "yearly": "yearly",
    "annual": "yearly",
    "annually": "yearly",
    "per year": "yearly",
}
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

# Merchants known by more than one name: a rule about one also matches the others.
MERCHANT_ALIASES: dict[str, tuple[str, ...]] = {
    "amazon web services": ("aws",),
    "aws": ("amazon web services",),
    "amazon": ("amzn",),
    "google cloud": ("gcp", "google cloud platform"),
    "microsoft": ("msft",),
    "microsoft azure": ("azure",),
    "mcdonald's": ("mcdonalds",),
    "mcdonalds": ("mcdonald's",),
    "deutsche bahn": ("db bahn", "db fernverkehr"),
}

# Category names as the taxonomy writes them, and words people use for them.
CATEGORY_NAMES: dict[str, str] = {name.lower(): name for name in TAXONOMY}
CATEGORY_NAMES.update(
    {
        "travel expenses": "Travel",
        "travelling": "Travel",
        "traveling": "Travel",
        "food": "Meals",
        "meal": "Meals",
        "restaurants": "Meals",
        "dining": "Meals",
        "hotel": "Lodging",
        "hotels": "Lodging",
        "accommodation": "Lodging",
        "gas": "Fuel",
        "petrol": "Fuel",
        "office": "Office Supplies",
        "office supply": "Office Supplies",
        "saas": "Software",
        "software subscriptions": "Software",
        "phone": "Telecom",
        "internet": "Telecom",
        "telecommunications": "Telecom",
        "taxi": "Transport",
        "transportation": "Transport",
        "medical": "Healthcare",
        "health": "Healthcare",
        "consulting": "Professional Services",
        "legal": "Professional Services",
    }
)

COUNTRY_NAMES: dict[str, str] = {}
CITY_NAMES: dict[str, str] = {}
for _country in COUNTRIES:
    COUNTRY_NAMES[_country.name.lower()] = _country.code
    for _written in _country.names:
        if len(_written) > 3:  # "USA" yes; two-letter codes collide with words ("IN", "IT")
            COUNTRY_NAMES[_written.lower().rstrip(".")] = _country.code
    for _city in _country.cities:
        CITY_NAMES[_city.lower()] = _city.title()
COUNTRY_NAMES.update({"usa": "US", "us": "US", "uk": "GB", "britain": "GB", "england": "GB",
                      "great britain": "GB", "holland": "NL", "the netherlands": "NL",
                      "the uk": "GB", "the us": "US", "the usa": "US"})
