// The Approvals page (approvals.*): the requests waiting (who asked, what, its arguments in
// words, when) with Approve and Reject with a reason for owners and admins (a requester may
// withdraw their own), the decided ones with who decided, when and why, and for owners and
// admins which capabilities wait for approval here (approvals.settings / approvals.configure).

import * as api from "./api.js";
import { h, announce, moment } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";
import { whoIs } from "./integrations.js";

const DECIDED_PAGE = 20; // as the query's limits say
const REQUEST_FIELDS = `id status title description capabilitySlug capability { name slug } requestedBy createdAt
  resolvedBy resolvedAt rejectionMessage lastError result`;
const PAGE_QUERY = `query Approvals {
  ${WORKSPACES}
  workspace { id name }
  membersList { members { userId email isYou role } }
  pending: approvalsList(input: {status: pending, limit: 100}) { requests { ${REQUEST_FIELDS} } nextCursor }
  executed: approvalsList(input: {status: executed, limit: 20}) { requests { ${REQUEST_FIELDS} } }
  rejected: approvalsList(input: {status: rejected, limit: 20}) { requests { ${REQUEST_FIELDS} } }
  approvalsSettings { capabilities { slug name gated } requireOtherApprover }
}`;
const APPROVE = `mutation Approve($input: ApproveRequestInput!) { approvalsApprove(input: $input) { approvalRequestId status capabilitySlug result } }`;
const REJECT = `mutation Reject($input: RejectRequestInput!) { approvalsReject(input: $input) { approvalRequestId status rejectionMessage } }`;
const CONFIGURE = `mutation ConfigureApprovals($input: ConfigureApprovalInput!) { approvalsConfigure(input: $input) {
  capabilities { slug name gated } requireOtherApprover } }`;

// What an approved call did, in words (an export names its record; others their status).
function resultInWords(request) {
  const result = request.result || {};
  if (result.exportRecordId) return h("span", {}, "Queued for sending (", h("a", { href: "#/integrations" }, `export ${result.exportRecordId}`), ").");
  if (typeof result.modified === "number") return `${result.modified} documents changed.`;
  return result.status ? `Ran: ${result.status}.` : "Ran.";
}

function pendingItem(request, { manager, who, onDone }) {
  const mine = who.isMe(request.requestedBy);
  const reason = h("textarea", { id: `reason-${request.id}`, rows: "2", maxlength: "500" });
  const error = h("p", { class: "error", role: "alert" });
  const buttons = [];
  const busy = (on) => buttons.forEach((b) => (b.disabled = on));
  const act = async (fn) => {
    error.textContent = "";
    busy(true);
    try {
      await fn();
    } catch (failure) {
      error.textContent = failure.message;
      busy(false);
    }
  };
  if (manager) {
    buttons.push(
      h(
        "button",
        {
          type: "button",
          class: "primary",
          id: `approve-${request.id}`,
          onclick: () =>
            act(async () => {
              await api.data(APPROVE, { input: { approvalRequestId: request.id } });
              onDone(`Approved: ${request.title}`);
            }),
        },
        "Approve",
      ),
    );
  }
  if (manager || mine) {
    buttons.push(
      h(
        "button",
        {
          type: "button",
          class: "danger",
          id: `reject-${request.id}`,
          onclick: () =>
            act(async () => {
              const message = reason.value.trim();
              await api.data(REJECT, { input: { approvalRequestId: request.id, ...(message ? { message } : {}) } });
              onDone(`${manager ? "Rejected" : "Withdrawn"}: ${request.title}`);
            }),
        },
        manager ? "Reject" : "Withdraw",
      ),
    );
  }
  return h(
    "li",
    { class: "panel approval", "data-request": request.id, "aria-labelledby": `title-${request.id}` },
    h("h3", { id: `title-${request.id}` }, request.title),
    h("p", { class: "approval-description" }, request.description),
    h("p", { class: "hint" }, `Asked by ${who(request.requestedBy)}, ${moment(request.createdAt)} (${request.capability.slug}).`),
    request.lastError ? h("p", { class: "error" }, `The last approval could not run it: ${request.lastError}`) : null,
    buttons.length
      ? h(
          "div",
          { class: "stack" },
          h("label", { for: reason.id }, manager ? "Reason for a rejection (the requester sees it)" : "Why you withdraw it (optional)"),
          reason,
          h("div", { class: "actions" }, buttons),
        )
      : null,
    error,
  );
}

function decidedRow(request, who) {
  const approved = request.status === "executed";
  return h(
    "tr",
    { "data-request": request.id, "data-status": request.status },
    h("td", { "data-label": "Request" }, request.title, h("br", {}), h("span", { class: "hint" }, request.description)),
    h("td", { "data-label": "Asked by" }, who(request.requestedBy), h("br", {}), h("span", { class: "hint" }, moment(request.createdAt))),
    h("td", { "data-label": "Decision", class: "decision" }, approved ? "Approved" : "Rejected"),
    h("td", { "data-label": "Decided by", class: "decided-by" }, who(request.resolvedBy), h("br", {}), h("span", { class: "hint" }, moment(request.resolvedAt))),
    h("td", { "data-label": "Reason or outcome" }, approved ? resultInWords(request) : request.rejectionMessage || "No reason given."),
  );
}

function settingsForm(settings, say) {
  const error = h("p", { class: "error", role: "alert" });
  const change = async (input, box) => {
    error.textContent = "";
    box.disabled = true;
    try {
      await api.data(CONFIGURE, { input });
      say("Approval settings saved");
    } catch (failure) {
      box.checked = !box.checked;
      error.textContent = failure.message;
    } finally {
      box.disabled = false;
    }
  };
  const other = h("input", { type: "checkbox", id: "require-other-approver", checked: settings.requireOtherApprover });
  other.addEventListener("change", () => change({ requireOtherApprover: other.checked }, other));
  return h(
    "section",
    { class: "panel", "aria-labelledby": "gates-h", id: "approval-settings" },
    h("h2", { id: "gates-h" }, "What waits for approval"),
    h("fieldset", {}, h("legend", {}, "These wait for an owner's or admin's approval when ticked"),
      settings.capabilities.map((capability) => {
        const box = h("input", { type: "checkbox", id: `gate-${capability.slug}`, "data-slug": capability.slug, checked: capability.gated });
        box.addEventListener("change", () => change({ capabilitySlug: capability.slug, gated: box.checked }, box));
        return h("div", { class: "check" }, box, h("label", { for: box.id }, `${capability.name} (${capability.slug})`));
      }),
    ),
    h("div", { class: "check" }, other, h("label", { for: other.id }, "Someone other than the requester must approve")),
    error,
  );
}

export async function approvalsView({ rerender }) {
  const data = await loadWithWorkspace(PAGE_QUERY, {});
  const members = data.membersList?.members || [];
  const me = members.find((m) => m.isYou);
  const manager = me ? ["owner", "admin"].includes(me.role) : false;
  const who = whoIs(members);
  who.isMe = (userId) => Boolean(me && me.userId === userId);
  const status = h("p", { id: "approvals-status", role: "status" });
  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  const onDone = (text) => {
    sessionStorage.setItem("fincap.approvals.said", text);
    rerender();
  };
  // Said after the page is drawn again (the request moves from waiting to decided).
  const said = sessionStorage.getItem("fincap.approvals.said");
  if (said) {
    sessionStorage.removeItem("fincap.approvals.said");
    say(said);
  }
  const pending = data.pending.requests;
  // The newest decisions of both kinds, the latest decided first.
  const decided = [...data.executed.requests, ...data.rejected.requests]
    .sort((a, b) => String(b.resolvedAt || b.createdAt).localeCompare(String(a.resolvedAt || a.createdAt)))
    .slice(0, DECIDED_PAGE);
  return h(
    "div",
    {},
    h("h1", {}, "Approvals"),
    h("p", { class: "hint" }, manager ? "Calls that wait for an owner's or admin's approval. Approving runs the call once, as the person who asked." : "Your calls that wait for an owner's or admin's approval."),
    status,
    h("h2", {}, `Waiting (${pending.length})`),
    pending.length
      ? h("ul", { class: "approvals-list", id: "pending-approvals" }, pending.map((r) => pendingItem(r, { manager, who, onDone })))
      : h("p", { id: "approvals-empty" }, "Nothing waits for approval."),
    h("h2", {}, "Decided"),
    decided.length
      ? h(
          "table",
          { class: "documents doc-table decided-table", id: "decided-approvals" },
          h("caption", { class: "visually-hidden" }, "Decided requests, newest first"),
          h("thead", {}, h("tr", {}, ["Request", "Asked by", "Decision", "Decided by", "Reason or outcome"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, decided.map((r) => decidedRow(r, who))),
        )
      : h("p", { id: "decided-empty" }, "Nothing decided yet."),
    manager && data.approvalsSettings ? settingsForm(data.approvalsSettings, say) : null,
  );
}
