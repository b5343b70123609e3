// Bulk actions on the documents selected in the table: archive (with Undo), set a category, tag
// and untag (documents.tag: every selected document in one call), read again
// (documents.reprocess: 50 ids a call), send to an accounting integration. The API has no "these ids" form of these capabilities
// (documents.bulk-edit selects by search, merchant or category, not by id), so each is one call
// per document, a few at a time, with a progress bar and each row's outcome in its row. A send
// that the workspace gates waits for an owner's or admin's approval: the row says which request.

import * as api from "./api.js";
import { h, clear, announce, errorBox, plural } from "./dom.js";
import { undoToast } from "./undo.js";
import { chip, createTag, knownTags } from "./tags.js";

const AT_ONCE = 3; // calls in flight: quick for a page of rows, gentle on a small server

const ARCHIVE = `mutation Archive($input: DeleteDocumentInput!) { documentsDelete(input: $input) { document { id archived } archivedDuplicates } }`;
const SET_CATEGORY = `mutation SetCategory($input: UpdateDocumentInput!) { documentsUpdate(input: $input) { document { id category } } }`;
const SEND = `mutation Send($input: SendToIntegrationInput!) { integrationsSend(input: $input) {
  status exportRecordId approvalRequestId warnings } }`;
const TAG = `mutation Tag($input: TagDocumentsInput!) { documentsTag(input: $input) { matched modified missing } }`;
const REPROCESS = `mutation ReadAgainMany($input: ReprocessDocumentsInput!) { documentsReprocess(input: $input) {
  queued missing notReady } }`;
const REPROCESS_AT_MOST = 50; // documents.reprocess takes at most 50 ids a call
const CONNECTED = `query Connected { integrationsList(input: {category: accounting, status: connected}) {
  integrations { id name tenants { id name } } } }`;

// Run `call(row)` for every row, AT_ONCE at a time; `progress` shows how far it got.
async function eachRow(rows, call, progress) {
  let done = 0;
  const queue = [...rows];
  progress.max = rows.length;
  progress.value = 0;
  progress.hidden = false;
  const worker = async () => {
    while (queue.length) {
      const row = queue.shift();
      await call(row);
      done += 1;
      progress.value = done;
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, rows.length) }, worker));
}

// The bar above the table. `table` is documentTable's handle; `categories` the names in use.
// onArchived(): after documents left the list, so the page can count what still matches.
// onTagged(ids): after documents.tag changed them, so the page reads those rows again.
export function bulkBar({ table, categories, onArchived, onTagged }) {
  const count = h("span", { id: "selected-count", class: "selected-count" }, "None selected");
  const progress = h("progress", { id: "bulk-progress", hidden: true, value: 0, max: 1 });
  const status = h("p", { id: "bulk-status", role: "status", class: "bulk-status" });
  const panel = h("div", { class: "bulk-panel", id: "bulk-panel" });
  const buttons = [];
  // What this sign-in may not do is disabled with the reason, never refused after the click.
  const blocked = new Map();
  const button = (id, text, onclick, scopes = []) => {
    const b = h("button", { type: "button", id, onclick, disabled: true }, text);
    const missing = scopes.filter((scope) => !api.allows(scope));
    if (missing.length) {
      blocked.set(b, `This sign-in may not do this (it lacks the scope ${missing.join(", ")})`);
      b.title = blocked.get(b);
    }
    buttons.push(b);
    return b;
  };
  const busy = (on) => {
    for (const b of buttons) b.disabled = on || !table.selected().length || blocked.has(b);
  };

  const finish = (counts) => {
    const said = Object.entries(counts)
      .filter(([, n]) => n)
      .map(([what, n]) => `${n.toLocaleString()} ${what}`)
      .join(", ");
    status.textContent = said;
    announce(said);
    busy(false);
  };

  async function archive() {
    const picked = table.selected();
    clear(panel);
    busy(true);
    const archived = [];
    let failed = 0;
    await eachRow(
      picked,
      async (row) => {
        try {
          const result = await api.data(ARCHIVE, { input: { id: row.doc.id } });
          const duplicates = result.documentsDelete.archivedDuplicates || [];
          archived.push(row.doc.id, ...duplicates);
          // Its duplicates were archived with it: off the list too (Undo restores them all).
          for (const id of [row.doc.id, ...duplicates]) table.remove(id);
        } catch (error) {
          failed += 1;
          table.note(row.doc.id, error.message, "error");
        }
      },
      progress,
    );
    update();
    finish({ archived: archived.length, failed });
    if (archived.length) await onArchived?.();
    if (archived.length) undoToast(`Archived ${plural(archived.length, "document")}`, archived);
  }

  function askCategory() {
    const input = h("input", { id: "bulk-category", list: "bulk-category-options", required: true, maxlength: "100", autocomplete: "off" });
    const options = h("datalist", { id: "bulk-category-options" }, categories.map((c) => h("option", { value: c })));
    clear(
      panel,
      h(
        "form",
        {
          class: "inline-edit",
          id: "bulk-category-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const category = input.value.trim();
            if (!category) return;
            const picked = table.selected();
            busy(true);
            let changed = 0;
            let failed = 0;
            await eachRow(
              picked,
              async (row) => {
                try {
                  const result = await api.data(SET_CATEGORY, { input: { id: row.doc.id, category } });
                  table.update(row.doc.id, { category: result.documentsUpdate.document.category });
                  table.note(row.doc.id, `category set`, "ok");
                  changed += 1;
                } catch (error) {
                  failed += 1;
                  table.note(row.doc.id, error.message, "error");
                }
              },
              progress,
            );
            clear(panel);
            finish({ [`set to ${category}`]: changed, failed });
          },
        },
        h("label", { for: "bulk-category" }, `Category for ${plural(table.selected().length, "document")}`),
        input,
        options,
        h("button", { type: "submit", class: "primary" }, "Set category"),
        h("button", { type: "button", onclick: () => clear(panel) }, "Cancel"),
      ),
    );
    input.focus();
  }

  // Tags to add and tags to take off, ticked; a new tag is created here (tags.create) and
  // ticked to be added. documents.tag leaves archived documents as they are: the result says so.
  function askTags() {
    const pick = (kind, tag, checked = false) =>
      h("label", {}, h("input", { type: "checkbox", name: kind, value: tag.name, checked }), chip(tag.name));
    const tags = knownTags();
    const adds = h("fieldset", { class: "tag-picks", id: "bulk-tag-add" }, h("legend", {}, "Add"), tags.map((t) => pick("add", t)));
    const removes = h("fieldset", { class: "tag-picks", id: "bulk-tag-remove" }, h("legend", {}, "Remove"), tags.map((t) => pick("remove", t)));
    const newName = h("input", { id: "bulk-new-tag", maxlength: "50", autocomplete: "off" });
    const error = h("p", { class: "error", role: "alert", id: "bulk-tag-error" });
    const create = async () => {
      const name = newName.value.trim();
      error.textContent = "";
      if (!name) return;
      try {
        const tag = await createTag(name);
        adds.append(pick("add", tag, true));
        removes.append(pick("remove", tag));
        newName.value = "";
        announce(`Created the tag ${tag.name}; it will be added`);
      } catch (failure) {
        error.textContent = failure.message;
      }
      newName.focus();
    };
    newName.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        create();
      }
    });
    const ticked = (box) => [...box.querySelectorAll("input:checked")].map((b) => b.value);
    const n = table.selected().length;
    clear(
      panel,
      h(
        "form",
        {
          id: "bulk-tag-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const add = ticked(adds);
            const remove = ticked(removes);
            if (!add.length && !remove.length) {
              error.textContent = "Tick a tag to add or to remove";
              return;
            }
            const picked = table.selected();
            const ids = picked.map((row) => row.doc.id);
            const archived = picked.filter((row) => row.doc.archived).length;
            busy(true);
            try {
              const done = (await api.data(TAG, { input: { ids, add, remove } })).documentsTag;
              const same = done.matched - done.modified - archived;
              const gone = done.missing.length;
              const said = [
                `${done.modified.toLocaleString()} ${add.length ? "tagged" : "untagged"}`,
                archived ? `${archived.toLocaleString()} archived left as they were` : "",
                same > 0 ? `${same.toLocaleString()} already as asked` : "",
                gone ? `${gone.toLocaleString()} no longer found` : "",
              ].filter(Boolean).join("; ");
              for (const row of picked) table.note(row.doc.id, row.doc.archived ? "archived: left as it was" : "", "");
              clear(panel);
              status.textContent = said;
              announce(said);
              await onTagged?.(ids);
            } catch (failure) {
              error.textContent = failure.message;
            } finally {
              busy(false);
            }
          },
        },
        h("p", { class: "hint" }, `Tags for ${plural(n, "document")}:`),
        tags.length ? null : h("p", { class: "hint" }, "The workspace has no tags yet: create one below."),
        adds,
        removes,
        h(
          "div",
          { class: "inline-edit" },
          h("label", { for: "bulk-new-tag" }, "New tag"),
          newName,
          h("button", { type: "button", id: "bulk-create-tag", onclick: create }, "Create and add"),
        ),
        h(
          "div",
          { class: "inline-edit" },
          h("button", { type: "submit", class: "primary" }, "Apply"),
          h("button", { type: "button", onclick: () => clear(panel) }, "Cancel"),
        ),
        error,
      ),
    );
    (tags.length ? adds.querySelector("input") : newName).focus();
  }

  function askReprocess() {
    const keep = h("input", { type: "checkbox", id: "bulk-keep-corrections", checked: true });
    clear(
      panel,
      h(
        "form",
        {
          class: "inline-edit",
          id: "bulk-reprocess-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const picked = table.selected();
            busy(true);
            const counts = { "queued to be read again": 0, "not ready": 0, failed: 0 };
            const batches = [];
            for (let i = 0; i < picked.length; i += REPROCESS_AT_MOST) batches.push(picked.slice(i, i + REPROCESS_AT_MOST));
            await eachRow(
              batches,
              async (batch) => {
                try {
                  const ids = batch.map((row) => row.doc.id);
                  const result = (await api.data(REPROCESS, { input: { ids, keepCorrections: keep.checked } })).documentsReprocess;
                  const notReady = new Set([...result.notReady, ...result.missing]);
                  for (const id of result.queued) table.note(id, "queued to be read again", "ok");
                  for (const id of notReady) table.note(id, "cannot be read again now (still being read, or no original)", "error");
                  counts["queued to be read again"] += result.queued.length;
                  counts["not ready"] += notReady.size;
                } catch (error) {
                  counts.failed += batch.length;
                  for (const row of batch) table.note(row.doc.id, error.message, "error");
                }
              },
              progress,
            );
            clear(panel);
            finish(counts);
          },
        },
        h("p", {}, `Read ${plural(table.selected().length, "document")} again with the current extraction.`),
        h("label", { for: "bulk-keep-corrections" }, keep, " Keep the corrections people made"),
        h("button", { type: "submit", class: "primary" }, "Read again"),
        h("button", { type: "button", onclick: () => clear(panel) }, "Cancel"),
      ),
    );
    keep.focus();
  }

  async function askIntegration() {
    clear(panel, h("p", { class: "hint" }, "Looking for connected accounting integrations…"));
    let integrations;
    try {
      integrations = (await api.data(CONNECTED)).integrationsList.integrations;
    } catch (error) {
      clear(panel, errorBox(error));
      return;
    }
    const targets = integrations.flatMap((i) => i.tenants.map((t) => ({ value: `${i.id}|${t.id}`, text: `${i.name}: ${t.name}` })));
    if (!targets.length) {
      clear(panel, h("p", { class: "hint" }, "No accounting integration is connected to this workspace. An owner or admin connects Xero or QuickBooks first."));
      return;
    }
    const select = h("select", { id: "bulk-integration" }, targets.map((t) => h("option", { value: t.value }, t.text)));
    clear(
      panel,
      h(
        "form",
        {
          class: "inline-edit",
          id: "bulk-send-form",
          onsubmit: async (event) => {
            event.preventDefault();
            const [integrationId, tenantId] = select.value.split("|");
            const picked = table.selected();
            busy(true);
            const counts = { queued: 0, "waiting for approval": 0, failed: 0 };
            await eachRow(
              picked,
              async (row) => {
                try {
                  const input = { documentId: row.doc.id, integrationId, tenantId, dryRun: false };
                  const result = (await api.data(SEND, { input })).integrationsSend;
                  if (result.status === "approval_required") {
                    counts["waiting for approval"] += 1;
                    table.note(row.doc.id, `waiting for approval #${result.approvalRequestId}`, "waiting");
                  } else {
                    counts.queued += 1;
                    table.note(row.doc.id, `queued for sending (export ${result.exportRecordId})`, "ok");
                  }
                } catch (error) {
                  counts.failed += 1;
                  table.note(row.doc.id, error.message, "error");
                }
              },
              progress,
            );
            clear(panel);
            finish(counts);
          },
        },
        h("label", { for: "bulk-integration" }, `Send ${plural(table.selected().length, "document")} to`),
        select,
        h("button", { type: "submit", class: "primary" }, "Send"),
        h("button", { type: "button", onclick: () => clear(panel) }, "Cancel"),
        h("p", { class: "hint" }, "Sending may need an owner's or admin's approval: each row then says which request waits."),
      ),
    );
    select.focus();
  }

  const element = h(
    "div",
    { class: "bulk", role: "region", "aria-label": "Selected documents" },
    h(
      "div",
      { class: "actions" },
      count,
      button("bulk-archive", "Archive", archive),
      button("bulk-set-category", "Set category…", askCategory),
      button("bulk-tag", "Tag…", askTags),
      button("bulk-reprocess", "Read again…", askReprocess, ["write_documents"]),
      button("bulk-send", "Send to accounting…", askIntegration, ["read_integrations", "write_integrations"]),
    ),
    blocked.size ? h("p", { class: "hint", id: "bulk-blocked" }, [...blocked.values()].join(". ")) : null,
    panel,
    progress,
    status,
  );

  function update() {
    const n = table.selected().length;
    count.textContent = n ? `${plural(n, "document")} selected` : "None selected";
    for (const b of buttons) b.disabled = !n || blocked.has(b);
  }

  return { element, update };
}
