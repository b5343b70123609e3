// Tags (tags.*): the workspace's tags as coloured chips, the text on each in black or white,
// whichever reads better on its colour (WCAG's contrast; one of the two always passes AA, 4.5:1);
// a document's tags with remove buttons and an "Add tag" control; the Tags page (rename, colour,
// delete after saying how many documents carry the tag).

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

export const TAGS_PATH = "#/tags";
export const TAG_FIELDS = "id name colour documentCount";
export const TAGS_LIST = `tagsList { tags { id name colour documentCount } }`; // TAG_FIELDS, spelled out (one level of splicing)
const TAGS_QUERY = `query Tags { ${TAGS_LIST} }`;
const CREATE = `mutation CreateTag($input: CreateTagInput!) { tagsCreate(input: $input) { tag { ${TAG_FIELDS} } } }`;
const UPDATE = `mutation UpdateTag($input: UpdateTagInput!) { tagsUpdate(input: $input) { tag { ${TAG_FIELDS} } documentsChanged } }`;
const DELETE = `mutation DeleteTag($input: TagRefInput!) { tagsDelete(input: $input) { id documentsChanged } }`;

// The workspace's tags as last read (name → tag): the chips take their colour from here.
const known = new Map();

export function rememberTags(tags) {
  known.clear();
  for (const tag of tags || []) known.set(tag.name.toLowerCase(), tag);
  return tags || [];
}

export function knownTags() {
  return [...known.values()].sort((a, b) => a.name.localeCompare(b.name));
}

export async function loadTags() {
  return rememberTags((await api.data(TAGS_QUERY)).tagsList.tags);
}

export async function createTag(name) {
  const tag = (await api.data(CREATE, { input: { name } })).tagsCreate.tag;
  known.set(tag.name.toLowerCase(), tag);
  return tag;
}

// WCAG 2's relative luminance of "#rrggbb".
function luminance(hex) {
  const channels = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255);
  const [r, g, b] = channels.map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function contrast(a, b) {
  return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
}

// Black or white text on `colour`, whichever contrasts more (at least 4.58:1 for any colour).
export function textOn(colour) {
  const l = luminance(/^#[0-9a-f]{6}$/i.test(colour || "") ? colour : "#e5e7eb");
  return contrast(l, 0) >= contrast(l, 1) ? "#000000" : "#ffffff";
}

// A tag as a chip (its colour from the workspace's tags; a name no longer a tag in grey).
export function chip(name, ...extra) {
  const colour = known.get(name.toLowerCase())?.colour || "#e5e7eb";
  const element = h("span", { class: "tag-chip" }, h("span", { class: "tag-name" }, name), ...extra);
  // Set through the CSSOM: the page's Content-Security-Policy refuses style attributes.
  element.style.backgroundColor = colour;
  element.style.color = textOn(colour);
  return element;
}

export function chips(names) {
  const list = names || [];
  return list.length ? h("span", { class: "tag-chips" }, list.map((name) => chip(name))) : "—";
}

// A document's tags: a chip each with a remove button, and "Add tag" (a name from the workspace's
// tags). `save(list)` stores the new list (documents.update's tags) and repaints the page.
export function documentTags(doc, save) {
  const names = doc.tags || [];
  const error = h("p", { class: "error", role: "alert", id: "add-tag-error" });
  const store = async (next, said) => {
    error.textContent = "";
    try {
      await save(next);
      announce(said);
    } catch (failure) {
      error.textContent = failure.message;
    }
  };
  const input = h("input", { id: "add-tag", list: "add-tag-options", autocomplete: "off", maxlength: "50", "data-edit": "tags" });
  const options = h("datalist", { id: "add-tag-options" }, knownTags().filter((t) => !names.includes(t.name)).map((t) => h("option", { value: t.name })));
  return h(
    "section",
    { class: "panel", "aria-labelledby": "tags-h" },
    h("h2", { id: "tags-h" }, "Tags"),
    h(
      "ul",
      { class: "tag-chips", id: "doc-tags" },
      names.map((name) =>
        h(
          "li",
          {},
          chip(
            name,
            h(
              "button",
              { type: "button", class: "tag-remove", "aria-label": `Remove the tag ${name}`, onclick: () => store(names.filter((n) => n !== name), `Tag ${name} removed`) },
              "×",
            ),
          ),
        ),
      ),
    ),
    names.length ? null : h("p", { class: "hint" }, "No tags yet."),
    h(
      "form",
      {
        class: "inline-edit",
        id: "add-tag-form",
        onsubmit: (event) => {
          event.preventDefault();
          const typed = input.value.trim();
          if (!typed) return;
          // As the workspace spells it ("travel" picks "Travel"); an unknown name is the server's to refuse.
          const name = known.get(typed.toLowerCase())?.name || typed;
          if (names.some((n) => n.toLowerCase() === name.toLowerCase())) {
            error.textContent = `${name} is already on this document`;
            return;
          }
          store([...names, name], `Tag ${name} added`);
        },
      },
      h("label", { for: "add-tag" }, "Add tag"),
      input,
      options,
      h("button", { type: "submit" }, "Add"),
      h("a", { href: TAGS_PATH }, "Manage tags"),
    ),
    error,
  );
}

// -- the Tags page -------------------------------------------------------------------------

export async function tagsView() {
  const data = await loadWithWorkspace(`query TagsPage { ${WORKSPACES} workspace { id name } ${TAGS_LIST} }`);
  const status = h("p", { id: "tags-status", role: "status" });
  const body = h("tbody", {});
  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  const rowOf = (tag) => {
    const name = h("input", { id: `tag-name-${tag.id}`, value: tag.name, maxlength: "50", required: true, autocomplete: "off" });
    const colour = h("input", { id: `tag-colour-${tag.id}`, type: "color", value: tag.colour });
    const error = h("span", { class: "error", role: "alert" });
    const preview = h("span", {}, chip(tag.name));
    const deleteCell = h("td", { "data-label": "Delete" });
    const remove = h(
      "button",
      {
        type: "button",
        class: "tag-delete danger",
        onclick: () => {
          const n = tag.documentCount;
          confirmInPlace(deleteCell, remove, {
            id: `confirm-delete-${tag.id}`,
            warning: n ? `Delete “${tag.name}”? It is taken off ${n.toLocaleString()} document${n === 1 ? "" : "s"}. ` : `Delete “${tag.name}”? No document carries it. `,
            yes: "Delete",
            no: "Keep",
            onYes: async () => {
              try {
                const done = (await api.data(DELETE, { input: { id: tag.id } })).tagsDelete;
                tr.remove();
                known.delete(tag.name.toLowerCase());
                say(`Deleted “${tag.name}”; taken off ${done.documentsChanged.toLocaleString()} document${done.documentsChanged === 1 ? "" : "s"}`);
                newName.focus(); // its row is gone: the keyboard goes to the page's first field
              } catch (failure) {
                clear(deleteCell, remove, errorBox(failure));
              }
            },
          });
        },
      },
      "Delete",
    );
    deleteCell.append(remove);
    const form = h(
      "form",
      {
        class: "inline-edit",
        onsubmit: async (event) => {
          event.preventDefault();
          error.textContent = "";
          const input = { id: tag.id };
          if (name.value.trim() !== tag.name) input.name = name.value.trim();
          if (colour.value.toLowerCase() !== tag.colour.toLowerCase()) input.colour = colour.value;
          if (Object.keys(input).length === 1) return;
          try {
            const done = (await api.data(UPDATE, { input })).tagsUpdate;
            known.delete(tag.name.toLowerCase());
            Object.assign(tag, done.tag);
            known.set(tag.name.toLowerCase(), tag);
            name.value = tag.name;
            clear(preview, chip(tag.name));
            say(`Saved “${tag.name}”${done.documentsChanged ? `; renamed on ${done.documentsChanged.toLocaleString()} documents` : ""}`);
          } catch (failure) {
            error.textContent = failure.message;
          }
        },
      },
      h("label", { for: name.id, class: "visually-hidden" }, `Name of ${tag.name}`),
      name,
      h("label", { for: colour.id, class: "visually-hidden" }, `Colour of ${tag.name}`),
      colour,
      h("button", { type: "submit" }, "Save"),
      error,
    );
    const tr = h(
      "tr",
      { "data-tag": tag.id },
      h("td", { "data-label": "Tag" }, preview),
      h("td", { "data-label": "Documents", class: "num tag-count" }, tag.documentCount.toLocaleString()),
      h("td", { "data-label": "Change" }, form),
      deleteCell,
    );
    return tr;
  };
  for (const tag of rememberTags(data.tagsList.tags)) body.append(rowOf(tag));

  const newName = h("input", { id: "new-tag", maxlength: "50", required: true, autocomplete: "off" });
  const newError = h("span", { class: "error", role: "alert" });
  const create = h(
    "form",
    {
      class: "inline-edit panel",
      id: "new-tag-form",
      onsubmit: async (event) => {
        event.preventDefault();
        newError.textContent = "";
        try {
          const tag = await createTag(newName.value);
          body.prepend(rowOf(tag));
          newName.value = "";
          say(`Created “${tag.name}”`);
        } catch (failure) {
          newError.textContent = failure.message;
        }
      },
    },
    h("label", { for: "new-tag" }, "New tag"),
    newName,
    h("button", { type: "submit", class: "primary" }, "Create"),
    newError,
  );
  return h(
    "div",
    {},
    h("p", {}, h("a", { href: "#/documents" }, "← Documents")),
    h("h1", {}, "Tags"),
    h("p", { class: "hint" }, "Tags are the workspace's: renaming one renames it on every document; deleting one takes it off every document, archived ones too."),
    create,
    status,
    h(
      "table",
      { class: "documents doc-table tags-table", id: "tags-table" },
      h("caption", { class: "visually-hidden" }, "The workspace's tags"),
      h("thead", {}, h("tr", {}, ["Tag", "Documents", "Change", "Delete"].map((t) => h("th", { scope: "col" }, t)))),
      body,
    ),
  );
}
