// A where clause ({logic, conditions: [{field, op, value} | {logic, conditions}]}) in words, for a
// person: "merchant is Uber or Bolt and amount over 100". A field or operator this file does not
// know is still said, by its own name, so a clause from a newer server reads instead of breaking.

const FIELDS = {
  merchant: "merchant",
  amount: "amount",
  currency: "currency",
  category: "category",
  docType: "type",
  docDate: "date",
  receivedAt: "added",
  processingStatus: "processing status",
  paymentStatus: "payment status",
  isRecurring: "recurring",
  recurringType: "recurs",
  paymentMethodEnding: "card ending",
  fromEmail: "sent from",
  tags: "tags",
  duplicateOf: "duplicate of",
  "expenseLocation.primary.countryCode": "country",
  "expenseLocation.primary.city": "city",
};

const OPS = {
  eq: "is",
  ne: "is not",
  gt: "over",
  gte: "at least",
  lt: "under",
  lte: "at most",
  in: "is one of",
  nin: "is none of",
  all: "has all of",
  regex: "matches",
};

const LOGIC = { and: " and ", or: " or ", nor: " or " };

function fieldWords(name) {
  return FIELDS[name] || String(name || "?");
}

// The grammar's name patterns (\b(?:uber|bolt)\b) as the names they match: "uber or bolt".
function patternWords(pattern) {
  const found = /^\\b\(\?:(.*)\)\\b$/.exec(pattern) || /^\\b(.*)\\b$/.exec(pattern);
  if (!found || /[[\]{}*+?^$\\]/.test(found[1].replace(/\\[.\s&'-]/g, ""))) return `“${pattern}”`;
  return found[1]
    .split("|")
    .map((name) => `“${name.replace(/\\(.)/g, "$1")}”`)
    .join(" or ");
}

function valueWords(value) {
  if (Array.isArray(value)) return value.map(valueWords).join(", ");
  if (value === true) return "yes";
  if (value === false) return "no";
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return `${value}`;
}

export function conditionWords(condition) {
  if (!condition || typeof condition !== "object") return String(condition);
  if (Array.isArray(condition.conditions)) {
    const parts = condition.conditions.map(conditionWords);
    const joined = parts.join(LOGIC[condition.logic] || ` ${condition.logic || "and"} `);
    return condition.logic === "nor" ? `none of: ${joined}` : parts.length > 1 ? `(${joined})` : joined;
  }
  const field = fieldWords(condition.field);
  const { op, value } = condition;
  if (op === "exists") return value ? `has a ${field}` : `has no ${field}`;
  if (op === "regex") return `${field} ${patternWords(String(value))}`;
  return `${field} ${OPS[op] || op || "?"} ${valueWords(value)}`;
}

// Each top-level condition in words (and-ed unless the clause says otherwise).
export function whereWords(where) {
  if (!where || !Array.isArray(where.conditions) || !where.conditions.length) return [];
  return where.conditions.map(conditionWords);
}

export function whereSentence(where) {
  const parts = whereWords(where);
  if (!parts.length) return "every document";
  return parts.join(LOGIC[where.logic] || " and ");
}

// The clause as an input again: GraphQL answers every field of a condition (null where unused);
// a where clause sent back (a link's address, documents.count) carries only those in use.
export function compactWhere(clause) {
  if (Array.isArray(clause)) return clause.map(compactWhere);
  if (!clause || typeof clause !== "object") return clause;
  return Object.fromEntries(
    Object.entries(clause)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, k === "value" ? v : compactWhere(v)]),
  );
}
