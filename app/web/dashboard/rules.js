// The Rules page (rules.*): a rule written in words is read by the server (rules.prepare, on a
// button or Enter only: each reading costs one of the key's rule readings) and shown back in
// words — when it runs, which documents, what it does —, with what was not understood and the
// warnings above it, and "matches N documents now" as a link to exactly those documents. Save
// (rules.execute) may wait for an owner's or admin's approval. The saved rules: each one's
// sentence, reading, run history (stats), an enable/disable switch and delete.
//
// A trigger, condition or action of a type this page does not know is shown by its type's name
// and its parameters, so a newer server's rule reads instead of breaking the page.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace, moment, plural } from "./dom.js";
import { state, loadWithWorkspace, WORKSPACES } from "./state.js";
import { LIST_PATH, whereHref } from "./listing.js";
import { whereWords, compactWhere } from "./where_words.js";

export const RULES_PATH = "#/rules";
// A where clause three levels deep, as saved views read theirs (views.js).
const RULE_WHERE = "logic conditions { field op value logic conditions { field op value logic conditions { field op value } } }";
const RULE_DEFINITION = `name trigger { type schedule { frequency weekday dayOfMonth hour } } conditions { ${RULE_WHERE} } actions { type category merchant tag recurringType integration integrationId tenantId email url reason }`;
const RULE_FIELDS = `id name status triggerType naturalLanguageRule createdBy createdAt nextRunAt definition { ${RULE_DEFINITION} } stats { runs documentsMatched actionsApplied actionsFailed lastRunAt lastError lastErrorAt awaitingApproval }`;
const RULES_QUERY = `query Rules {
  ${WORKSPACES}
  workspace { id name }
  rulesList(input: { includeDisabled: true, limit: 100 }) { rules { ${RULE_FIELDS} } }
  membersList { members { userId isYou } }
}`;
const PREPARE = `query PrepareRule($input: PrepareRuleInput!) {
  rulesPrepare(input: $input) { rule { ${RULE_DEFINITION} } notUnderstood parsedBy warnings matchingDocuments matchingTransactions } }`;
const EXECUTE = `mutation SaveRule($input: ExecuteRuleInput!) {
  rulesExecute(input: $input) { status rule { ${RULE_FIELDS} } notUnderstood warnings webhookSecret approvalRequestId } }`;
const ENABLE = `mutation EnableRule($input: EnableRuleInput!) { rulesEnable(input: $input) { rule { ${RULE_FIELDS} } } }`;
const DISABLE = `mutation DisableRule($input: DisableRuleInput!) { rulesDisable(input: $input) { rule { ${RULE_FIELDS} } } }`;
const DELETE = `mutation DeleteRule($input: DeleteRuleInput!) { rulesDelete(input: $input) { id deleted } }`;

const MANAGERS = ["owner", "admin"];
const WRITERS = ["owner", "admin", "member"];

// GraphQL spells enum values with "_" (document_processed); the API's own names use "-".
const kebab = (value) => String(value || "").replace(/_/g, "-");
const words = (value) => kebab(value).replace(/-/g, " ");

// One GraphQL call whose first error is thrown in words; a 429 (rule readings used up) says
// when to try again.
async function ask(query, variables) {
  try {
    return await api.data(query, variables);
  } catch (error) {
    if (!(error instanceof api.ApiError) || error.status !== 429) throw error;
    const again = error.retryAfter ? `try again in ${plural(error.retryAfter, "second")}` : "try again in a moment";
    throw new api.ApiError(`Too many rules read for now (each reading takes the server up to a second): ${again}.`, error.code, 429, error.retryAfter);
  }
}

// -- a rule in words ----------------------------------------------------------------------

const TRIGGERS = {
  "document-processed": () => "When a document has been read (uploaded, e-mailed, sent by WhatsApp)",
  "document-updated": () => "When a document is corrected",
  "transaction-matched": () => "When a bank transaction is matched to documents (confirmed by a person, or matched at import)",
  schedule: (trigger) => scheduleWords(trigger.schedule),
};

function scheduleWords(schedule) {
  if (!schedule) return "On a schedule";
  const hour = `${String(schedule.hour ?? 6).padStart(2, "0")}:00 UTC`;
  if (schedule.frequency === "weekly") return `Every ${words(schedule.weekday || "monday").replace(/^./, (c) => c.toUpperCase())} at ${hour}`;
  if (schedule.frequency === "monthly") return `On day ${schedule.dayOfMonth || 1} of every month at ${hour}`;
  if (schedule.frequency === "daily") return `Every day at ${hour}`;
  return `${words(schedule.frequency)} at ${hour}`;
}

// The parameters set on a step of an unknown type, "name: value", so nothing is hidden.
function parameters(step) {
  return Object.entries(step || {})
    .filter(([k, v]) => k !== "type" && v !== null && v !== undefined && v !== "")
    .map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`)
    .join(", ");
}

export function triggerWords(trigger) {
  const known = TRIGGERS[kebab(trigger?.type)];
  if (known) return known(trigger);
  const extra = parameters(trigger);
  return `On “${words(trigger?.type) || "?"}”${extra ? ` (${extra})` : ""}`;
}

const ACTIONS = {
  "set-category": (a) => `Set the category to “${a.category}”`,
  "set-merchant": (a) => `Set the merchant to “${a.merchant}”`,
  "mark-recurring": (a) => `Mark it recurring${a.recurringType ? ` (${words(a.recurringType)})` : ""}`,
  archive: () => "Archive it",
  "add-tag": (a) => `Tag it “${a.tag}”`,
  "send-to-integration": (a) => `Send it to ${words(a.integration)}${a.tenantId ? ` (tenant ${a.tenantId})` : ""}`,
  "require-approval": (a) => `Hold what follows for an owner's or admin's approval${a.reason ? `: “${a.reason}”` : ""}`,
  "notify-email": (a) => `E-mail ${a.email}`,
  "notify-webhook": (a) => `Post it to the webhook ${a.url}`,
};

export function actionWords(action) {
  const known = ACTIONS[kebab(action?.type)];
  if (known) return known(action);
  const extra = parameters(action);
  return `${words(action?.type) || "?"}${extra ? ` (${extra})` : ""}`;
}

// A rule whose trigger is a bank match: its conditions are about the transaction, and its
// actions change the documents matched to it.
function aboutTransactions(definition) {
  return kebab(definition.trigger?.type) === "transaction-matched";
}

// The rule's reading: when, which documents (or transactions), what it does.
function reading(definition, idPrefix) {
  const conditions = whereWords(definition.conditions);
  const banked = aboutTransactions(definition);
  return h(
    "dl",
    { class: "rule-reading", id: idPrefix ? `${idPrefix}-reading` : null },
    h("dt", {}, "When"),
    h("dd", { class: "rule-trigger" }, triggerWords(definition.trigger)),
    h("dt", {}, banked ? "Which transactions" : "Which documents"),
    h("dd", {}, conditions.length ? h("ul", { class: "rule-conditions" }, conditions.map((c) => h("li", {}, c))) : banked ? "Every matched transaction (no conditions)" : "Every document (no conditions)"),
    h("dt", {}, banked ? "What it does to the matched documents" : "What it does"),
    h("dd", {}, h("ol", { class: "rule-actions" }, (definition.actions || []).map((a) => h("li", {}, actionWords(a))))),
  );
}

// -- the page ----------------------------------------------------------------------------

export async function rulesView() {
  const data = await loadWithWorkspace(RULES_QUERY);
  if (!data.rulesList) throw new Error("This sign-in may not read the workspace's rules");
  const role = state.workspaces.find((w) => w.id === data.workspace.id)?.role || "member";
  const me = (data.membersList?.members || []).find((m) => m.isYou)?.userId || null;
  const canWrite = WRITERS.includes(role) && api.allows("write_rules");
  // Enable, disable, delete: the rule's author, or an owner or admin (me unknown: the server says).
  const mayChange = (rule) => canWrite && (MANAGERS.includes(role) || !me || rule.createdBy === me);

  const status = h("p", { id: "rules-status", role: "status" });
  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  const list = h("ul", { class: "rules-list", id: "rules-list" });
  const empty = h("p", { class: "empty", id: "no-rules" }, "No rules yet.");
  const showEmpty = () => (empty.hidden = list.children.length > 0);

  const ruleItem = (rule) => {
    const item = h("li", { class: "panel rule", "data-rule": rule.id, "data-status": rule.status });
    const paint = () => {
      item.dataset.status = rule.status;
      const s = rule.stats;
      const enabled = rule.status === "enabled";
      const controls = h("div", { class: "actions rule-controls" });
      const error = h("span", { class: "error", role: "alert" });
      if (mayChange(rule)) {
        const toggle = h(
          "button",
          {
            type: "button",
            class: "rule-toggle",
            "aria-label": `${enabled ? "Disable" : "Enable"} “${rule.name}”`,
            onclick: async () => {
              toggle.disabled = true;
              error.textContent = "";
              try {
                const done = await ask(enabled ? DISABLE : ENABLE, { input: { id: rule.id } });
                Object.assign(rule, (done.rulesDisable || done.rulesEnable).rule);
                paint();
                item.querySelector(".rule-toggle").focus();
                say(`“${rule.name}” ${rule.status === "enabled" ? "enabled: it runs again" : "disabled: it runs no more until enabled"}`);
              } catch (failure) {
                toggle.disabled = false;
                error.textContent = failure.message;
              }
            },
          },
          enabled ? "Disable" : "Enable",
        );
        const remove = h("button", { type: "button", class: "rule-delete danger" }, "Delete");
        const cell = h("span", {}, remove);
        remove.addEventListener("click", () =>
          confirmInPlace(cell, remove, {
            id: `rule-delete-yes-${rule.id}`,
            warning: `Delete “${rule.name}” for good, with its history? What it did to documents stays. `,
            yes: "Delete",
            no: "Keep",
            onYes: async () => {
              try {
                await ask(DELETE, { input: { id: rule.id } });
                item.remove();
                showEmpty();
                say(`Deleted “${rule.name}”`);
                text.focus();
              } catch (failure) {
                clear(cell, remove, errorBox(failure));
              }
            },
          }),
        );
        controls.append(toggle, cell);
      }
      clear(
        item,
        h(
          "div",
          { class: "rule-head" },
          h("h3", {}, rule.name),
          h("span", { class: `badge rule-state ${enabled ? "" : "warn"}`, "data-status": rule.status }, enabled ? "Enabled" : "Disabled"),
        ),
        h("p", { class: "rule-sentence" }, "“", rule.naturalLanguageRule, "”"),
        reading(rule.definition),
        h(
          "p",
          { class: "meta rule-history", "data-runs": String(s.runs) },
          s.runs
            ? `Ran ${plural(s.runs, "time")}, last ${moment(s.lastRunAt, "")}; matched ${plural(s.documentsMatched, "document")}; ${plural(s.actionsApplied, "action")} applied, ${s.actionsFailed.toLocaleString()} failed.`
            : "Has not run yet.",
          rule.nextRunAt && enabled ? ` Next run ${moment(rule.nextRunAt, "")}.` : "",
          s.awaitingApproval.length ? ` ${plural(s.awaitingApproval.length, "document")} held for approval.` : "",
        ),
        s.lastError ? h("p", { class: "error rule-error" }, `Last failure (${moment(s.lastErrorAt, "")}): ${s.lastError}`) : null,
        controls.children.length ? controls : null,
        error,
      );
    };
    paint();
    return item;
  };
  for (const rule of data.rulesList.rules) list.append(ruleItem(rule));
  showEmpty();

  // Writing one: read on Preview or Enter (never while typing), then Save.
  const text = h("textarea", { id: "rule-text", rows: "2", maxlength: "1000", required: true, autocomplete: "off", "aria-describedby": "rule-hint key-hints" });
  const preview = h("div", { id: "rule-preview", "aria-live": "polite" });
  const readButton = h("button", { type: "submit", id: "rule-read", class: "primary" }, "Preview");
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  text.addEventListener("input", () => {
    // What is shown no longer is what is typed: it cannot be saved as read.
    const save = preview.querySelector("#rule-save");
    if (save) {
      save.disabled = true;
      save.title = "Preview the changed sentence first";
    }
  });
  const form = h(
    "form",
    {
      class: "panel rule-form",
      id: "rule-form",
      onsubmit: async (event) => {
        event.preventDefault();
        const sentence = text.value.trim();
        if (!sentence) return;
        readButton.disabled = true;
        clear(preview, h("p", { class: "loading" }, "Reading…"));
        try {
          const read = (await ask(PREPARE, { input: { naturalLanguageRule: sentence } })).rulesPrepare;
          clear(preview, previewOf(sentence, read));
          const matching = read.matchingTransactions != null ? plural(read.matchingTransactions, "bank transaction") : plural(read.matchingDocuments ?? 0, "document");
          announce(read.rule ? `Read: ${matching} match now${read.notUnderstood.length ? `; ${plural(read.notUnderstood.length, "part")} not understood` : ""}` : "No rule could be read");
        } catch (failure) {
          clear(preview, errorBox(failure));
        } finally {
          readButton.disabled = false;
        }
      },
    },
    h("label", { for: "rule-text" }, "Write a rule in words"),
    h("p", { class: "hint", id: "rule-hint" }, "For example: “Uber and Bolt receipts are Travel”, “Send invoices over 500 EUR to Xero”, “Every Monday archive receipts under 1 USD”."),
    text,
    h("p", { class: "key-hints", id: "key-hints" }, "Keys: ", h("kbd", {}, "Enter"), " preview ", h("kbd", {}, "Shift"), "+", h("kbd", {}, "Enter"), " new line"),
    h("div", { class: "actions" }, readButton),
  );

  function previewOf(sentence, read) {
    const parts = [];
    if (read.notUnderstood.length) {
      parts.push(
        h(
          "div",
          { class: "rule-problems", id: "rule-not-understood", role: "alert" },
          h("p", {}, h("strong", {}, "Not understood"), " — the rule leaves these parts out:"),
          h("ul", {}, read.notUnderstood.map((part) => h("li", {}, "“", part, "”"))),
        ),
      );
    }
    if (read.warnings.length) {
      parts.push(h("div", { class: "rule-warnings", id: "rule-warnings" }, h("p", {}, h("strong", {}, "Check before saving:")), h("ul", {}, read.warnings.map((w) => h("li", {}, w)))));
    }
    if (!read.rule) {
      parts.push(h("p", { class: "error", id: "rule-none" }, "No rule could be read from this: say what it should do, e.g. “… are Travel” or “archive …”."));
      return h("section", { class: "panel", "aria-labelledby": "rule-preview-h" }, h("h2", { id: "rule-preview-h" }, "What the server read"), parts);
    }
    const n = read.matchingDocuments ?? 0;
    const where = compactWhere(read.rule.conditions);
    // A rule about bank transactions counts transactions (the Documents page cannot list them).
    const matches = read.matchingTransactions != null
      ? h("span", { id: "rule-matches", "data-count": String(read.matchingTransactions) }, `Matches ${plural(read.matchingTransactions, "bank transaction")} now; it acts when one of them is matched to documents`)
      : h(
          "a",
          { id: "rule-matches", href: where && where.conditions?.length ? whereHref(where) : LIST_PATH, "data-count": String(n) },
          `Matches ${plural(n, "document")} now`,
        );
    const saved = h("div", { id: "rule-saved", role: "status" });
    const save = h("button", { type: "button", id: "rule-save", class: "primary" }, "Save rule");
    save.addEventListener("click", async () => {
      save.disabled = true;
      try {
        const done = (await ask(EXECUTE, { input: { naturalLanguageRule: sentence, confirm: true } })).rulesExecute;
        if (done.status === "approval_required") {
          saved.dataset.approval = done.approvalRequestId || "";
          saved.replaceChildren(h("p", {}, `Waiting for approval: an owner or admin approves saving it (request ${done.approvalRequestId}); it is listed here once approved.`));
          say("The rule waits for approval");
          return;
        }
        list.prepend(ruleItem(done.rule));
        showEmpty();
        saved.replaceChildren(
          h("p", { class: "ok" }, `Saved “${done.rule.name}”: it is enabled.`),
          done.webhookSecret ? h("p", {}, "The webhook's signing secret (shown this once): ", h("code", { class: "secret" }, done.webhookSecret)) : null,
        );
        say(`Saved “${done.rule.name}”`);
      } catch (failure) {
        save.disabled = false;
        saved.replaceChildren(errorBox(failure));
      }
    });
    parts.push(
      h("p", { class: "rule-name" }, h("strong", {}, read.rule.name), read.parsedBy === "llm" ? " (read by the language model)" : ""),
      reading(read.rule, "rule-preview"),
      h("p", { class: "rule-count" }, matches),
      canWrite ? h("div", { class: "actions" }, save) : h("p", { class: "hint", id: "rule-readonly" }, "Your role may preview rules but not save them."),
      saved,
    );
    return h("section", { class: "panel", "aria-labelledby": "rule-preview-h" }, h("h2", { id: "rule-preview-h" }, "What the server read"), parts);
  }

  return h(
    "div",
    {},
    h("h1", {}, "Rules"),
    h("p", { class: "hint" }, "A rule acts on documents by itself: when one arrives, when one is corrected, or on a schedule. Write it in words; the server reads it and shows what it understood before you save."),
    form,
    preview,
    h("h2", { id: "rules-h" }, "Saved rules"),
    status,
    empty,
    list,
  );
}
