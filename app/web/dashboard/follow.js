// Documents that change elsewhere (another tab, a REST or MCP client, a rule, an upload finishing):
// the Documents table and a document's page follow the workspace's event stream (live.js), no
// reload and no poll. Events only name what changed; the view reads again just those documents,
// in one request per batch, as its own query shows them (its filter, its fields).

import * as api from "./api.js";
import { onDocumentEvent } from "./live.js";

// Events are gathered until FOLLOW_MS pass without one, then read in one request (a bulk edit
// sends hundreds); but never longer than FOLLOW_MAX_MS after the first of a batch, or a long
// burst would hold the first change back for as long as it lasts. While a read is under way new
// events wait for the next batch.
export const FOLLOW_MS = 300;
export const FOLLOW_MAX_MS = 1000;
// The most ids one where clause takes (`in` takes at most 100 values).
export const IDS_AT_ONCE = 100;

// Call `onBatch({changes, lagged})` with the documents events named since the last batch
// (`changes`: documentId → the set of event types), batched as above; `lagged` when
// the stream fell behind and events were skipped (read everything shown again). Stops by itself
// once `alive()` is false (the person went to another page); returns the function that stops it.
// A view is built before it is shown: until it has been alive once, a batch waits for it (a
// view that is never shown, a navigation having overtaken it, stops after a few tries).
export function followEvents(alive, onBatch, ms = FOLLOW_MS, longest = FOLLOW_MAX_MS) {
  let changes = new Map();
  let lagged = false;
  let timer = null;
  let first = null; // when the batch's first event came
  let running = false;
  let shown = false;
  let waited = 0;
  const schedule = () => {
    if (running) return;
    const now = Date.now();
    first ??= now;
    clearTimeout(timer);
    timer = setTimeout(flush, Math.max(0, Math.min(ms, first + longest - now)));
  };
  const flush = async () => {
    timer = null;
    first = null;
    if (!alive()) {
      if (shown || ++waited > 20) return stop();
      return schedule();
    }
    shown = true;
    const batch = { changes, lagged };
    changes = new Map();
    lagged = false;
    running = true;
    try {
      await onBatch(batch);
    } catch (error) {
      console.warn("fincap: could not read changed documents", error);
    } finally {
      running = false;
    }
    if (changes.size || lagged) schedule();
  };
  const stop = onDocumentEvent((event) => {
    if (shown && !alive()) return stop();
    if (event.type === "lagged") lagged = true;
    else if (event.documentId) {
      if (!changes.has(event.documentId)) changes.set(event.documentId, new Set());
      changes.get(event.documentId).add(event.type);
    } else return;
    schedule();
  });
  return stop;
}

// The documents among `ids` that the list's query (`input`, documents.search's input) shows, read
// in chunks of IDS_AT_ONCE, without search words (relevance needs the whole list): id → document.
// The query passed takes the input as $input and selects workspace.documents.documents.
export async function readShown(query, input, ids) {
  const found = new Map();
  for (let start = 0; start < ids.length; start += IDS_AT_ONCE) {
    const chunk = ids.slice(start, start + IDS_AT_ONCE);
    const conditions = [...(input.where?.conditions || []), { field: "id", op: "in", value: chunk }];
    const page = await api.data(query, {
      input: { ...input, query: null, useSearch: false, cursor: null, limit: chunk.length, where: { logic: "and", conditions } },
    });
    for (const doc of page.workspace.documents.documents) found.set(doc.id, doc);
  }
  return found;
}

// Whether `doc` sorts before `first` in `sort` ({by, order}), as the server orders: numbers as
// numbers, dates and times by their moment, text as text; a missing value sorts last when
// descending and first when ascending (MongoDB's order).
export function sortsBefore(doc, first, sort) {
  const key = (d) => {
    const value = d?.[sort.by];
    if (value === null || value === undefined || value === "") return null;
    if (sort.by === "amount" || sort.by === "convertedAmount") return Number(value);
    if (sort.by === "receivedAt") return Date.parse(value);
    return String(value);
  };
  const a = key(doc);
  const b = key(first);
  if (a === null) return sort.order === "asc" && b !== null;
  if (b === null) return sort.order === "desc";
  return sort.order === "asc" ? a <= b : a >= b;
}
