// A document's notes: what people wrote about it, with who and when, and each note's earlier
// texts. Anyone in the workspace adds one; the buttons shown are the ones the server says the
// person may use (viewerCanEdit, viewerCanDelete). The section reads its notes itself and keeps
// its own state, so the document page's repaints after a correction leave a note being typed
// alone.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";

const NOTE_FIELDS = "id text author authorEmail createdAt updatedAt edits history { text editedBy editedAt } viewerCanEdit viewerCanDelete";
const LIST = `query Notes($input: ListNotesInput!) { notesList(input: $input) { notes { ${NOTE_FIELDS} } } }`;
const ADD = `mutation AddNote($input: AddNoteInput!) { notesAdd(input: $input) { note { ${NOTE_FIELDS} } } }`;
const UPDATE = `mutation UpdateNote($input: UpdateNoteInput!) { notesUpdate(input: $input) { note { ${NOTE_FIELDS} } } }`;
const DELETE = `mutation DeleteNote($input: NoteRefInput!) { notesDelete(input: $input) { id deleted } }`;
const MAX_LENGTH = 5000;

const when = (value) => new Date(value).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });

export function notesSection(documentId) {
  let notes = [];
  const section = h("section", { class: "panel notes", id: "notes-section", "aria-labelledby": "notes-h" });
  const heading = h("h2", { id: "notes-h" }, "Notes");
  const list = h("ol", { class: "notes-list", id: "notes-list" });
  const status = h("p", { role: "status", id: "notes-status" });
  const text = h("textarea", { id: "note-text", rows: "3", maxlength: String(MAX_LENGTH), "aria-describedby": "note-hint" });
  const problem = h("p", { class: "error", role: "alert", id: "note-error" });
  const form = h(
    "form",
    { id: "note-form", "aria-labelledby": "note-label", onsubmit: (event) => { event.preventDefault(); add(); } },
    h("label", { for: "note-text", id: "note-label" }, "Add a note"),
    text,
    h("p", { class: "hint", id: "note-hint" }, "Its words find this document in a search. Ctrl+Enter saves."),
    problem,
    h("button", { type: "submit", class: "primary", id: "note-save" }, "Add note"),
  );
  text.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  section.append(heading, list, status, form);

  const paint = () => {
    heading.textContent = notes.length ? `Notes (${notes.length})` : "Notes";
    clear(list, notes.length ? notes.map(noteItem) : [h("li", { class: "hint" }, "No notes yet.")]);
  };

  function noteItem(note) {
    const by = note.authorEmail || note.author;
    const changed = note.edits ? ` · changed ${note.edits === 1 ? "once" : `${note.edits} times`}, last ${when(note.updatedAt)}` : "";
    const buttons = h("p", { class: "note-actions" });
    const item = h(
      "li",
      { class: "note", "data-id": note.id },
      h("p", { class: "note-text" }, note.text),
      h("p", { class: "meta" }, `${by}, ${when(note.createdAt)}${changed}`),
      note.history.length
        ? h(
            "details",
            { class: "history" },
            h("summary", {}, `Earlier texts (${note.history.length})`),
            h("ul", {}, note.history.map((r) => h("li", {}, `${when(r.editedAt)}: `, h("q", {}, r.text)))),
          )
        : null,
      buttons,
    );
    if (note.viewerCanEdit) buttons.append(h("button", { type: "button", class: "note-edit", "aria-label": `Edit the note of ${when(note.createdAt)}`, onclick: () => edit(note, item) }, "Edit"));
    if (note.viewerCanDelete) {
      const remove = h("button", { type: "button", class: "note-delete", "aria-label": `Delete the note of ${when(note.createdAt)}` }, "Delete");
      remove.addEventListener("click", () =>
        confirmInPlace(buttons, remove, { id: `note-delete-yes-${note.id}`, warning: "Delete this note? ", yes: "Delete", no: "Keep", onYes: () => drop(note) }),
      );
      buttons.append(remove);
    }
    return item;
  }

  function edit(note, item) {
    const id = `note-edit-${note.id}`;
    const area = h("textarea", { id, rows: "3", maxlength: String(MAX_LENGTH) }, note.text);
    const error = h("p", { class: "error", role: "alert" });
    const cancel = () => { paint(); list.querySelector(`[data-id="${note.id}"] .note-edit`)?.focus(); };
    const editor = h(
      "form",
      {
        class: "note-editor",
        onsubmit: async (event) => {
          event.preventDefault();
          try {
            const result = await api.data(UPDATE, { input: { documentId, id: note.id, text: area.value } });
            notes = notes.map((n) => (n.id === note.id ? result.notesUpdate.note : n));
            cancel();
            announce("Note saved");
          } catch (failure) {
            error.replaceChildren(errorBox(failure));
          }
        },
        onkeydown: (event) => {
          if (event.key === "Escape") cancel();
          if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) { event.preventDefault(); editor.requestSubmit(); }
        },
      },
      h("label", { for: id }, "Note"),
      area,
      error,
      h("button", { type: "submit", class: "primary" }, "Save"),
      h("button", { type: "button", onclick: cancel }, "Cancel"),
    );
    clear(item, editor);
    area.focus();
  }

  async function add() {
    problem.textContent = "";
    if (!text.value.trim()) {
      problem.textContent = "Write something first.";
      text.focus();
      return;
    }
    try {
      const result = await api.data(ADD, { input: { documentId, text: text.value } });
      notes = [...notes, result.notesAdd.note];
      text.value = "";
      paint();
      announce("Note added");
    } catch (error) {
      problem.replaceChildren(errorBox(error));
    }
  }

  async function drop(note) {
    try {
      await api.data(DELETE, { input: { documentId, id: note.id } });
      notes = notes.filter((n) => n.id !== note.id);
      paint();
      announce("Note deleted");
      text.focus();
    } catch (error) {
      status.replaceChildren(errorBox(error));
    }
  }

  // Read once the section is on the page; a failure says so in the section, the page stays.
  api
    .data(LIST, { input: { documentId } })
    .then((result) => {
      notes = result.notesList.notes;
      paint();
      section.dataset.loaded = "1";
    })
    .catch((error) => status.replaceChildren(errorBox(error)));
  paint();
  return section;
}
