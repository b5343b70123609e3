// The user's API keys in this workspace: create (the secret is shown once, the scopes chosen),
// list (where each came from, what it may do, when it was last used), revoke. Signed in with
// an account, the person also sees the keys that act in all their workspaces (the bootstrap
// key), so they can revoke those here too.

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

const KEY_FIELDS = "id name prefix restrictedTo scopes createdAt revokedAt isCurrent origin originName endsWithGrant lastUsedAt";
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
  const scopes = await scopeChooser();
  const form = h(
    "form",
    {
      class: "panel",
      id: "create-key",
      onsubmit: async (event) => {
        event.preventDefault();
        const chosen = scopes.chosen();
        if (chosen === null) {
          clear(created, h("p", { class: "error", role: "alert" }, "Tick at least one thing the key may do."));
          return;
        }
        try {
          const result = await api.data(
            `mutation Create($input: CreateApiKeyInput!) { apiKeysCreate(input: $input) { apiKey key { ${KEY_FIELDS} } } }`,
            { input: { name: name.value.trim(), restricted: !everywhere.checked, scopes: chosen } },
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
    h("div", { class: "field check" }, everywhere, h("label", { for: "key-everywhere" }, "Usable in all my workspaces")),
    scopes.element,
    h("button", { type: "submit", class: "primary" }, "Create key"),
  );
  return h(
    "div",
    {},
    h("h1", {}, "API keys"),
    h(
      "p",
      {},
      "Keys let programs call fincap as you. Give each program its own key so it can be revoked alone. " +
        "A key made here is yours: it works until you revoke it, also after you sign out.",
    ),
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
      h(
        "thead",
        {},
        h("tr", {}, ["Name", "Key", "Where", "May", "Made by", "Created", "Last used", ""].map((t) => h("th", { scope: "col" }, t))),
      ),
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
            h("td", { "data-col": "where" }, key.restrictedTo ? "this workspace" : "all workspaces"),
            h("td", { "data-col": "scopes" }, scopeText(key.scopes)),
            h("td", { "data-col": "origin" }, originText(key)),
            h("td", {}, new Date(key.createdAt).toLocaleDateString()),
            h("td", { "data-col": "last-used" }, key.lastUsedAt ? new Date(key.lastUsedAt).toLocaleString() : "never"),
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

const ORIGINS = {
  dashboard: () => "the dashboard",
  bootstrap: () => "CLI bootstrap",
  operator: () => "an operator (CLI)",
  oauth: (key) => `the app ${key.originName || "(an OAuth client)"}`,
  api_key: (key) => (key.originName ? `the key ${key.originName}` : "another key"),
};

function originText(key) {
  const made = (ORIGINS[key.origin] || (() => key.origin))(key);
  return key.endsWithGrant ? `${made}; ends when that app's access ends` : made;
}

function scopeText(scopes) {
  return scopes.includes("all") ? "everything" : scopes.join(", ");
}

// The scopes a new key may get: every one the role allows (the default), or some of them.
// The list offered is what this sign-in holds (the role's, for an account's sign-in); the
// server refuses, naming the scope, anything beyond the role or the credential.
async function scopeChooser() {
  const current = api.session();
  let offered = current?.scopes || [];
  if (!offered.length || offered.includes("all")) {
    const response = await fetch("/v1/oauth/dashboard-client", { headers: { Accept: "application/json" } });
    offered = response.ok ? (await response.json()).scope.split(" ") : [];
  }
  offered = offered.filter((s) => s !== "all");
  const everything = h("input", { type: "radio", name: "key-scopes", id: "scopes-role", value: "role", checked: true });
  const some = h("input", { type: "radio", name: "key-scopes", id: "scopes-some", value: "some" });
  const boxes = offered.map((scope) =>
    h("input", { type: "checkbox", id: `scope-${scope}`, value: scope, "data-scope": scope, disabled: true }),
  );
  const toggle = () => boxes.forEach((b) => (b.disabled = !some.checked));
  everything.addEventListener("change", toggle);
  some.addEventListener("change", toggle);
  const element = h(
    "fieldset",
    { class: "field", id: "key-scopes" },
    h("legend", {}, "What it may do"),
    h("div", { class: "check" }, everything, h("label", { for: "scopes-role" }, "Everything my role here allows")),
    h("div", { class: "check" }, some, h("label", { for: "scopes-some" }, "Only:")),
    h(
      "ul",
      { class: "scope-list" },
      boxes.map((b) => h("li", { class: "check" }, b, h("label", { for: b.id }, b.value))),
    ),
  );
  return {
    element,
    // [] asks for the role's scopes; null: "Only" with nothing ticked.
    chosen: () => {
      if (!some.checked) return [];
      const ticked = boxes.filter((b) => b.checked).map((b) => b.value);
      return ticked.length ? ticked : null;
    },
  };
}
