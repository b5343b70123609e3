// The Integrations page (integrations.*, exports.list): each accounting product with its state in
// words, Connect (the provider's consent in this tab, then back here: the connect URL's
// ?return=dashboard), Disconnect after an in-place confirmation, the account mapping
// (integrations.configure), sending documents not yet exported (integrations.send, one call per
// document; a gated send waits on the Approvals page) and the export history with the
// provider's error in words. While an export is queued or sending, the history reads itself
// again every few seconds until it settles.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace, money, moment } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

export const INTEGRATIONS_PATH = "#/integrations";
const HISTORY_PAGE = 20;
const FOLLOW_MS = 1500; // how often a queued or sending export is read again
const FOLLOW_ROUNDS = 40; // …for about a minute at most; "Refresh" reads it after that
const SEND_CHOICES = 20; // documents offered for sending, newest first

const INTEGRATION_FIELDS = `id name status configured tenants { id name } connectedAt lastError
  settings { accountCodes defaultAccountCode taxCodes paymentAccount }`;
// Spelled out (the dashboard's queries splice one level of constants).
const HISTORY = `exportsList(input: $history) { exports { id documentId integrationId tenantId status error
  requestedBy approvedBy createdAt updatedAt payloadSummary { vendor total currency date } } nextCursor }`;
const PAGE_QUERY = `query Integrations($history: ListExportsInput!, $unsent: SearchDocumentsInput) {
  ${WORKSPACES}
  workspace { id name unsent: documents(input: $unsent) { documents { id merchant amount currency docDate } } }
  integrationsList(input: {category: accounting}) { integrations { ${INTEGRATION_FIELDS} } }
  membersList { members { userId email isYou role } }
  ${HISTORY}
}`;
const HISTORY_QUERY = `query ExportHistory($history: ListExportsInput!) { ${HISTORY} }`;
const DISCONNECT = `mutation Disconnect($input: IntegrationRefInput!) { integrationsDisconnect(input: $input) { id status } }`;
const CONFIGURE = `mutation Configure($input: ConfigureIntegrationInput!) { integrationsConfigure(input: $input) { ${INTEGRATION_FIELDS} } }`;
const SEND = `mutation SendOne($input: SendToIntegrationInput!) { integrationsSend(input: $input) {
  status exportRecordId approvalRequestId } }`;

const STATUS_WORDS = {
  queued: "Queued",
  sending: "Sending",
  exported: "Sent",
  failed: "Failed",
  unlinked: "Unlinked",
};

function day(iso) {
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: "medium" });
}

// Who a user id is, in words (the workspace's members by e-mail; "you" for the signed-in person).
export function whoIs(members) {
  const byId = new Map((members || []).map((m) => [m.userId, m]));
  return (userId) => {
    if (!userId) return "—";
    const member = byId.get(userId);
    if (!member) return "a former member";
    return member.isYou ? `${member.email} (you)` : member.email;
  };
}

// The state of one integration, in words.
function stateInWords(integration) {
  if (!integration.configured) return "Not set up on this server: the operator sets its client id and secret.";
  if (integration.status === "connected") {
    const names = integration.tenants.map((t) => t.name).join(", ");
    return `Connected to ${names}${integration.connectedAt ? ` since ${day(integration.connectedAt)}` : ""}.`;
  }
  if (integration.status === "error") return `Needs reconnecting${integration.lastError ? `: ${integration.lastError}` : ""}.`;
  return "Not connected.";
}

async function startConnect(integration, button, place) {
  button.disabled = true;
  try {
    const response = await fetch(`/v1/integrations/${encodeURIComponent(integration.id)}/connect?return=dashboard`, {
      headers: { ...api.headers(), Accept: "application/json" },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error?.errorMessage || `Could not start connecting (HTTP ${response.status})`);
    announce(`Opening ${integration.name}…`);
    // The provider's consent in this tab; its callback sends the browser back to this page.
    location.assign(body.data.result.authorizationUrl);
  } catch (error) {
    button.disabled = false;
    place.append(errorBox(error));
  }
}

function lines(map) {
  return Object.entries(map || {})
    .map(([key, value]) => `${key} = ${value}`)
    .join("\n");
}

// "Meals = 420" lines → { Meals: "420" }; a key whose line was removed → null (removes it).
function parseLines(text, before, label) {
  const out = {};
  for (const [n, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (!line) continue;
    const at = line.indexOf("=");
    if (at < 1 || !line.slice(at + 1).trim()) throw new Error(`${label}, line ${n + 1}: write it as “name = code”`);
    out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  for (const key of Object.keys(before || {})) if (!(key in out)) out[key] = null;
  return out;
}

function mappingForm(integration, manager, say) {
  const s = integration.settings;
  if (!s) return null;
  const id = integration.id;
  const fields = {
    defaultAccountCode: h("input", { id: `${id}-default-account`, value: s.defaultAccountCode || "", maxlength: "100", autocomplete: "off", disabled: !manager }),
    accountCodes: h("textarea", { id: `${id}-account-codes`, rows: "4", disabled: !manager }, lines(s.accountCodes)),
    taxCodes: h("textarea", { id: `${id}-tax-codes`, rows: "3", disabled: !manager }, lines(s.taxCodes)),
  };
  if (id === "quickbooks") fields.paymentAccount = h("input", { id: `${id}-payment-account`, value: s.paymentAccount || "", maxlength: "100", autocomplete: "off", disabled: !manager });
  const error = h("p", { class: "error", role: "alert" });
  return h(
    "details",
    { class: "mapping" },
    h("summary", {}, "Account mapping"),
    h(
      "form",
      {
        class: "stack",
        id: `${id}-mapping`,
        onsubmit: async (event) => {
          event.preventDefault();
          error.textContent = "";
          try {
            const input = {
              integrationId: id,
              accountCodes: parseLines(fields.accountCodes.value, s.accountCodes, "Accounts by category"),
              taxCodes: parseLines(fields.taxCodes.value, s.taxCodes, "Tax codes by rate"),
            };
            if (fields.defaultAccountCode.value.trim()) input.defaultAccountCode = fields.defaultAccountCode.value.trim();
            if (fields.paymentAccount?.value.trim()) input.paymentAccount = fields.paymentAccount.value.trim();
            const saved = (await api.data(CONFIGURE, { input })).integrationsConfigure;
            integration.settings = saved.settings;
            fields.accountCodes.value = lines(saved.settings.accountCodes);
            fields.taxCodes.value = lines(saved.settings.taxCodes);
            say(`Saved the account mapping of ${integration.name}`);
          } catch (failure) {
            error.textContent = failure.message;
          }
        },
      },
      manager ? null : h("p", { class: "hint" }, "Owners and admins change the mapping."),
      h("label", { for: fields.defaultAccountCode.id }, "Account for categories not listed"),
      fields.defaultAccountCode,
      h("label", { for: fields.accountCodes.id }, "Accounts by category (one “category = account code” a line)"),
      fields.accountCodes,
      h("label", { for: fields.taxCodes.id }, "Tax codes by rate (one “rate in percent = tax code” a line)"),
      fields.taxCodes,
      fields.paymentAccount ? [h("label", { for: fields.paymentAccount.id }, "Account purchases are paid from"), fields.paymentAccount] : null,
      manager ? h("button", { type: "submit" }, "Save mapping") : null,
      error,
    ),
  );
}

function providerPanel(integration, manager, rerender, say) {
  const actions = h("div", { class: "actions", id: `${integration.id}-actions` });
  const connect = h(
    "button",
    { type: "button", class: "primary", id: `connect-${integration.id}`, onclick: (event) => startConnect(integration, event.currentTarget, actions) },
    integration.status === "available" ? `Connect ${integration.name}` : `Reconnect ${integration.name}`,
  );
  const disconnect = h(
    "button",
    {
      type: "button",
      class: "danger",
      id: `disconnect-${integration.id}`,
      onclick: () =>
        confirmInPlace(actions, disconnect, {
          id: `confirm-disconnect-${integration.id}`,
          warning: `Disconnect ${integration.name}? Bills already sent stay there; the account mapping is kept for a reconnect. `,
          yes: "Disconnect",
          no: "Keep connected",
          onYes: async () => {
            try {
              await api.data(DISCONNECT, { input: { integrationId: integration.id } });
              say(`${integration.name} disconnected`);
              rerender();
            } catch (failure) {
              clear(actions, disconnect, errorBox(failure));
            }
          },
        }),
    },
    "Disconnect",
  );
  if (manager && integration.configured) actions.append(connect);
  if (manager && integration.status !== "available") actions.append(disconnect);
  return h(
    "section",
    { class: "panel integration", id: `integration-${integration.id}`, "aria-labelledby": `${integration.id}-h` },
    h("h2", { id: `${integration.id}-h` }, integration.name),
    h("p", { class: "integration-state", id: `${integration.id}-state`, "data-status": integration.status }, stateInWords(integration)),
    manager ? null : h("p", { class: "hint" }, "Owners and admins connect and disconnect."),
    actions,
    mappingForm(integration, manager, say),
  );
}

// Send documents not yet exported: tick them, choose where, send (a gated send waits for approval).
function sendForm(connected, unsent, afterSend) {
  if (!connected.length) return h("p", { class: "hint", id: "send-none" }, "Connect an accounting product to send documents to it.");
  const targets = connected.flatMap((i) => i.tenants.map((t) => ({ value: `${i.id}|${t.id}`, label: `${i.name}: ${t.name}` })));
  const target = h("select", { id: "send-target" }, targets.map((t) => h("option", { value: t.value }, t.label)));
  const outcome = h("ul", { id: "send-outcome", class: "outcomes", "aria-live": "polite" });
  const boxes = unsent.map((doc) =>
    h("input", { type: "checkbox", id: `send-${doc.id}`, value: doc.id, "data-doc": doc.id }),
  );
  return h(
    "form",
    {
      class: "panel",
      id: "send-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const chosen = boxes.filter((b) => b.checked).map((b) => b.value);
        clear(outcome);
        if (!chosen.length) {
          outcome.append(h("li", { class: "error", role: "alert" }, "Tick the documents to send."));
          return;
        }
        const [integrationId, tenantId] = target.value.split("|");
        let queued = 0;
        let waiting = 0;
        for (const documentId of chosen) {
          try {
            const done = (await api.data(SEND, { input: { documentId, integrationId, tenantId, dryRun: false } })).integrationsSend;
            if (done.status === "approval_required") {
              waiting += 1;
              outcome.append(h("li", { "data-doc": documentId }, `${documentId}: waiting for approval `, h("a", { href: "#/approvals" }, "(Approvals)")));
            } else {
              queued += 1;
              outcome.append(h("li", { "data-doc": documentId }, `${documentId}: queued for sending`));
            }
          } catch (failure) {
            outcome.append(h("li", { class: "error", "data-doc": documentId }, `${documentId}: ${failure.message}`));
          }
        }
        announce(`${queued} queued, ${waiting} waiting for approval`);
        afterSend();
      },
    },
    h("h2", {}, "Send documents"),
    h("p", { class: "hint" }, "The newest documents not yet sent. To send others, select them on the ", h("a", { href: "#/documents" }, "Documents"), " page and choose Send to accounting."),
    h("label", { for: "send-target" }, "Send to"),
    target,
    unsent.length
      ? h(
          "fieldset",
          {},
          h("legend", {}, "Documents"),
          unsent.map((doc, i) =>
            h("div", { class: "check" }, boxes[i], h("label", { for: boxes[i].id }, `${doc.merchant || "Unknown merchant"}, ${money(doc.amount, doc.currency)}${doc.docDate ? `, ${doc.docDate}` : ""}`)),
          ),
        )
      : h("p", { id: "send-nothing" }, "Every document has been sent."),
    h("button", { type: "submit", class: "primary", id: "send-button", disabled: !unsent.length }, "Send"),
    outcome,
  );
}

function historyRow(record, names, who) {
  const summary = record.payloadSummary;
  const problem = record.error ? h("span", { class: "error" }, record.error) : "";
  return h(
    "tr",
    { "data-export": record.id, "data-doc": record.documentId, "data-status": record.status },
    h("td", { "data-label": "Requested" }, moment(record.createdAt)),
    h("td", { "data-label": "Document" }, h("a", { href: `#/documents/${encodeURIComponent(record.documentId)}` }, summary.vendor), ` ${money(summary.total, summary.currency)}`),
    h("td", { "data-label": "To" }, names(record)),
    h("td", { "data-label": "Status", class: "export-status" }, STATUS_WORDS[record.status] || record.status),
    h("td", { "data-label": "Asked by" }, who(record.requestedBy)),
    h("td", { "data-label": "Approved by", class: "export-approver" }, record.approvedBy ? who(record.approvedBy) : "not needed"),
    h("td", { "data-label": "Error", class: "export-error" }, problem),
  );
}

export async function integrationsView({ rerender }) {
  const unsentInput = { limit: SEND_CHOICES, sortBy: "docDate", sortOrder: -1, exportStatus: "not_exported" };
  const data = await loadWithWorkspace(PAGE_QUERY, { history: { limit: HISTORY_PAGE }, unsent: unsentInput });
  const integrations = data.integrationsList.integrations;
  const me = (data.membersList?.members || []).find((m) => m.isYou);
  const manager = me ? ["owner", "admin"].includes(me.role) : false;
  const who = whoIs(data.membersList?.members);
  const tenantNames = new Map(integrations.flatMap((i) => i.tenants.map((t) => [`${i.id}|${t.id}`, `${i.name}: ${t.name}`])));
  const names = (record) => tenantNames.get(`${record.integrationId}|${record.tenantId}`) || `${record.integrationId}: ${record.tenantId}`;
  const status = h("p", { id: "integrations-status", role: "status" });
  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  const justConnected = new URLSearchParams((location.hash.split("?")[1] || "")).get("connected");
  const connectedNow = integrations.find((i) => i.id === justConnected && i.status === "connected");
  if (connectedNow) say(`${connectedNow.name} is connected`);

  const body = h("tbody", {});
  const more = h("button", { type: "button", id: "history-more", hidden: true }, "Show older");
  let cursor = data.exportsList.nextCursor;
  let rounds = 0;
  let timer = null;
  const fill = (records, append) => {
    if (!append) clear(body);
    for (const record of records) body.append(historyRow(record, names, who));
    more.hidden = !cursor;
  };
  const reload = async () => {
    clearTimeout(timer);
    const page = (await api.data(HISTORY_QUERY, { history: { limit: HISTORY_PAGE } })).exportsList;
    cursor = page.nextCursor;
    fill(page.exports, false);
    follow(page.exports);
  };
  // Read the history again while a delivery is under way (the worker sends in the background).
  const follow = (records) => {
    const moving = records.some((r) => r.status === "queued" || r.status === "sending");
    if (!moving || rounds >= FOLLOW_ROUNDS) return;
    rounds += 1;
    timer = setTimeout(() => {
      if (!body.isConnected) return; // the page was left
      reload().catch(() => {});
    }, FOLLOW_MS);
  };
  more.addEventListener("click", async () => {
    const page = (await api.data(HISTORY_QUERY, { history: { limit: HISTORY_PAGE, cursor } })).exportsList;
    cursor = page.nextCursor;
    fill(page.exports, true);
  });
  fill(data.exportsList.exports, false);
  follow(data.exportsList.exports);

  const connected = integrations.filter((i) => i.status === "connected");
  const history = h(
    "section",
    { "aria-labelledby": "history-h" },
    h("h2", { id: "history-h" }, "Export history"),
    h("button", { type: "button", id: "history-refresh", onclick: () => { rounds = 0; reload().then(() => announce("Export history read again")); } }, "Refresh"),
    data.exportsList.exports.length ? null : h("p", { id: "history-empty" }, "Nothing has been sent yet."),
    h(
      "table",
      { class: "documents doc-table history-table", id: "export-history" },
      h("caption", { class: "visually-hidden" }, "Exports to accounting, newest first"),
      h("thead", {}, h("tr", {}, ["Requested", "Document", "To", "Status", "Asked by", "Approved by", "Error"].map((t) => h("th", { scope: "col" }, t)))),
      body,
    ),
    more,
  );
  return h(
    "div",
    {},
    h("h1", {}, "Integrations"),
    h("p", { class: "hint" }, "Send documents to your accounting product as bills, with the original attached. A send waits for an owner's or admin's approval unless the workspace switched that off (", h("a", { href: "#/approvals" }, "Approvals"), ")."),
    status,
    h("div", { class: "integrations" }, integrations.map((i) => providerPanel(i, manager, rerender, say))),
    sendForm(connected, data.workspace.unsent.documents, () => { rounds = 0; reload().catch(() => {}); }),
    history,
  );
}
