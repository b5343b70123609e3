// The user's API keys in this workspace: create (the secret is shown once), list, revoke.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

const KEY_FIELDS = "id name prefix restrictedTo scopes createdAt revokedAt isCurrent";
const KEYS_QUERY = `query Keys {
  ${WORKSPACES}
  workspace { id name }
  apiKeysList(input: {includeRevoked: false}) { keys { ${KEY_FIELDS} } } }`;

export async function keysView({ rerender }) {
  const data = await loadWithWorkspace(KEYS_QUERY, {});
  if (!data.apiKeysList) throw new Error("This sign-in may not read API keys");
  const keys = data.apiKeysList.keys;
  // The list is redrawn in place when a key is made, so it shows the new key at once while
  // the secret stays on screen (a full rerender would lose it).
  const list = h("div", { id: "key-list" }, keyList(keys, rerender));
  const created = h("div", { id: "created-key", "aria-live": "polite" });
  const name = h("input", { id: "key-name", required: true, maxlength: "100", placeholder: "e.g. accounting export" });
  const everywhere = h("input", { id: "key-everywhere", type: "checkbox" });
  const form = h(
    "form",
    {
      class: "panel",
      id: "create-key",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const result = await api.data(
            `mutation Create($input: CreateApiKeyInput!) { apiKeysCreate(input: $input) { apiKey key { ${KEY_FIELDS} } } }`,
            { input: { name: name.value.trim(), restricted: !everywhere.checked } },
          );
          const secret = result.apiKeysCreate.apiKey;
          keys.unshift(result.apiKeysCreate.key);
          clear(list, keyList(keys, rerender));
          name.value = "";
          const output = h("output", { id: "new-secret", class: "secret" }, secret);
          clear(
            created,
            h("p", { class: "ok" }, "Your new key. Copy it now: it will not be shown again."),
            output,
            h("button", { type: "button", onclick: () => navigator.clipboard?.writeText(secret).then(() => announce("Copied")) }, "Copy"),
            h("button", { type: "button", onclick: rerender }, "Done"),
          );
          announce("Key created");
          output.focus();
        } catch (error) {
          clear(created, errorBox(error));
        }
      },
    },
    h("h2", {}, "New key"),
    h("div", { class: "field" }, h("label", { for: "key-name" }, "Name"), name),
    api.session()?.kind === "key"
      ? h("div", { class: "field check" }, everywhere, h("label", { for: "key-everywhere" }, "Usable in all my workspaces"))
      : null,
    h("button", { type: "submit", class: "primary" }, "Create key"),
  );
  return h(
    "div",
    {},
    h("h1", {}, "API keys"),
    h("p", {}, "Keys let programs call fincap as you, in this workspace. Give each program its own key so it can be revoked alone."),
    form,
    created,
    h("h2", {}, "Your keys"),
    list,
  );
}

function keyList(keys, rerender) {
  return keys.length ? keyTable(keys, rerender) : h("p", { class: "empty" }, "No keys in this workspace yet.");
}

function keyTable(keys, rerender) {
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { id: "keys" },
      h("thead", {}, h("tr", {}, ["Name", "Key", "Where", "Created", ""].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        keys.map((key) => {
          const cell = h("td", {});
          const revoke = h(
            "button",
            {
              type: "button",
              class: "danger",
              "data-revoke": key.id,
              "aria-label": `Revoke ${key.name}`,
              onclick: () => confirmRevoke(key, cell, revoke, rerender),
            },
            "Revoke",
          );
          cell.append(revoke);
          return h(
            "tr",
            { "data-key": key.id },
            h("td", {}, key.name, key.isCurrent ? h("span", { class: "badge" }, "this session") : null),
            h("td", {}, h("code", {}, `${key.prefix}…`)),
            h("td", {}, key.restrictedTo ? "this workspace" : "all workspaces"),
            h("td", {}, new Date(key.createdAt).toLocaleDateString()),
            cell,
          );
        }),
      ),
    ),
  );
}

function confirmRevoke(key, cell, button, rerender) {
  confirmInPlace(cell, button, {
    id: "confirm-revoke",
    warning: key.isCurrent ? "This is the key you are signed in with. " : "Programs using it will stop working. ",
    yes: `Yes, revoke ${key.name}`,
    no: "Keep it",
    onYes: async () => {
      try {
        await api.data(`mutation Revoke($input: RevokeApiKeyInput!) { apiKeysRevoke(input: $input) { key { id revokedAt } } }`, { input: { id: key.id } });
        announce(`${key.name} revoked`);
        if (key.isCurrent) {
          api.saveSession(null);
          location.hash = "#/";
        }
        rerender();
      } catch (error) {
        cell.append(errorBox(error));
      }
    },
  });
}
