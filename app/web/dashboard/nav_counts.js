// The navigation's counts, in one request: how many documents wait for a person's review
// (needsReview) and the saved views with how many documents each lists (views_nav.js), read
// again when the workspace's events say documents changed (live.js), once they pause for a
// second.

import * as api from "./api.js";
import { onDocumentEvent, debounce } from "./live.js";
import { VIEWS_NAV, showViews } from "./views_nav.js";

export const QUEUE_WHERE = { conditions: [{ field: "needsReview", op: "eq", value: true }] };
// The navigation's one request: the review count and the saved views with their counts.
const COUNT_QUERY = `query Navigation($count: CountDocumentsInput) { workspace { waiting: counts(input: $count) { count } } ${VIEWS_NAV} }`;

// Read again once events pause this long: a bulk edit's hundreds of events are one count.
const QUIET_MS = 1000;
let stop = null;

// Show `count` on the link (also called by the Review page, which reads it with its queue).
export function showReviewCount(count) {
  const badge = document.getElementById("review-count");
  if (!badge) return;
  badge.textContent = String(count);
  badge.dataset.count = String(count);
  badge.classList.toggle("warn", count > 0);
}

export async function refreshNavCounts() {
  try {
    const data = await api.data(COUNT_QUERY, { count: { where: QUEUE_WHERE } });
    showReviewCount(data.workspace?.waiting.count ?? 0);
    showViews(data.viewsList?.views || []);
  } catch (error) {
    console.warn("fincap: could not count the review queue", error);
  }
}

// Keep the count current while signed in; stopNavCounts ends it (sign-out, another workspace).
export function followNavCounts() {
  if (stop) return;
  refreshNavCounts();
  stop = onDocumentEvent(debounce(refreshNavCounts, QUIET_MS));
}

export function stopNavCounts() {
  stop?.();
  stop = null;
  showViews([]);
}
