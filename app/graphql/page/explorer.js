// fincap's GraphQL explorer: GraphiQL with the explorer plugin (click fields together), the
// example operations (one tab each) and a credential: the dashboard's sign-in when this tab
// has one, else an API key pasted in the bar. Nothing is filled into the headers editor.
(function () {
  "use strict";

  const ENDPOINT = "/v1/graphql";
  // Where app/web/dashboard/api.js keeps its credential ({kind, secret, orgId}) for the tab.
  const DASHBOARD = "fincap.session";
  // A key pasted here ({secret}) and the workspace picked here: this page's own, so choosing
  // another workspace in the explorer does not move the dashboard.
  const OWN_KEY = "fincap.explorer.key";
  const OWN_WORKSPACE = "fincap.explorer.workspace";
  // What an HTTP header may carry (ISO-8859-1): a browser refuses anything else, such as an
  // ellipsis in a placeholder key.
  const HEADER_TEXT = /^[\x20-\x7e\x80-\xff]*$/;

  const examples = JSON.parse(document.getElementById("explorer-examples").textContent);
  const bar = {
    signed: document.getElementById("explorer-signed"),
    form: document.getElementById("explorer-key-form"),
    key: document.getElementById("explorer-key"),
    workspaceLabel: document.getElementById("explorer-workspace-label"),
    workspace: document.getElementById("explorer-workspace"),
    forget: document.getElementById("explorer-forget"),
    error: document.getElementById("explorer-error"),
  };

  function stored(name) {
    try {
      return JSON.parse(sessionStorage.getItem(name));
    } catch {
      return null;
    }
  }

  // The credential requests carry: a key pasted here first (the person chose it), then the
  // dashboard's sign-in (API key or OAuth access token), else none.
  function credential() {
    const own = stored(OWN_KEY);
    if (own && own.secret) return { secret: own.secret, orgId: null, from: "key" };
    const dashboard = stored(DASHBOARD);
    if (dashboard && dashboard.secret) {
      return { secret: dashboard.secret, orgId: dashboard.orgId || null, from: "dashboard" };
    }
    return null;
  }

  function authHeaders(current) {
    if (!current) return {};
    const out = { Authorization: `Bearer ${current.secret}` };
    const orgId = stored(OWN_WORKSPACE) || current.orgId;
    if (orgId) out["X-Service-Org-Id"] = orgId;
    return out;
  }

  function showError(message) {
    bar.error.textContent = message || "";
  }

  // GraphiQL 3 can send the operation name of the tab shown before (after switching tabs),
  // which the server rightly refuses: a name the document does not define is left out, so a
  // document of one operation runs that one.
  function ownOperation(body) {
    try {
      const request = JSON.parse(body);
      if (!request.operationName) return body;
      const names = GraphiQL.GraphQL.parse(request.query)
        .definitions.filter((d) => d.kind === "OperationDefinition")
        .map((d) => d.name && d.name.value);
      if (names.includes(request.operationName)) return body;
      delete request.operationName;
      return JSON.stringify(request);
    } catch {
      return body; // not JSON or not GraphQL: the server says what is wrong
    }
  }

  // GraphiQL's own fetcher, its requests given the credential's headers (the headers editor
  // can still override them) and checked before they leave: a header a browser would refuse
  // becomes a message that says which one, not "Error fetching schema".
  function fetcherFor(current) {
    return GraphiQL.createFetcher({
      url: ENDPOINT,
      fetch: async (url, init) => {
        const headers = { ...authHeaders(current), ...((init && init.headers) || {}) };
        for (const [name, value] of Object.entries(headers)) {
          if (!HEADER_TEXT.test(String(value))) {
            const message = `The ${name} header holds a character no HTTP header may carry; type it in plain ASCII.`;
            showError(message);
            throw new Error(message);
          }
        }
        const response = await fetch(url, { ...init, headers, body: ownOperation(init.body) });
        const body = await response.clone().json().catch(() => ({}));
        const refused = (body.errors || []).some((e) => e.extensions && e.extensions.status === 401);
        if (response.status === 401 || refused) {
          showError(
            current && current.from === "dashboard"
              ? "The dashboard's sign-in has ended: sign in again there, or paste an API key."
              : "The server did not accept this key: paste another.",
          );
        } else {
          showError("");
        }
        return response;
      },
    });
  }

  async function workspaces(current) {
    const response = await fetch(ENDPOINT, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json", ...authHeaders({ ...current, orgId: null }) },
      body: JSON.stringify({ query: "{ workspacesList { currentOrgId workspaces { id name role } } }" }),
    });
    const body = await response.json().catch(() => ({}));
    return body.data && body.data.workspacesList;
  }

  // The bar: who the requests are sent as, the workspace, or the field to paste a key into.
  async function renderBar(current) {
    bar.form.hidden = Boolean(current);
    bar.forget.hidden = !current || current.from !== "key";
    bar.workspaceLabel.hidden = true;
    if (!current) {
      bar.signed.textContent = "Not signed in: paste an API key to run operations (Docs and the Explorer work without one).";
      return;
    }
    bar.signed.textContent =
      current.from === "dashboard" ? "Signed in from the dashboard." : `Using the key ${current.secret.slice(0, 7)}...`;
    const listed = await workspaces(current);
    if (!listed) return;
    const chosen = stored(OWN_WORKSPACE) || current.orgId || listed.currentOrgId;
    bar.workspace.replaceChildren(
      ...listed.workspaces.map((w) => {
        const option = new Option(`${w.name} (${w.role})`, w.id);
        option.selected = w.id === chosen;
        return option;
      }),
    );
    bar.workspaceLabel.hidden = listed.workspaces.length === 0;
    if (!chosen && listed.workspaces.length) {
      // A key for several workspaces: the first, as the dashboard does.
      sessionStorage.setItem(OWN_WORKSPACE, JSON.stringify(listed.workspaces[0].id));
      render();
    }
  }

  const explorerPlugin = GraphiQLPluginExplorer.explorerPlugin();
  const root = ReactDOM.createRoot(document.getElementById("graphiql"));
  let fetcher = null;
  let fetcherKey = null;

  // GraphiQL refetches the schema when its fetcher changes: one per credential and workspace.
  function render() {
    const current = credential();
    const key = JSON.stringify(authHeaders(current));
    if (key !== fetcherKey) {
      fetcherKey = key;
      fetcher = fetcherFor(current);
    }
    root.render(
      React.createElement(
        GraphiQL,
        {
          fetcher,
          plugins: [explorerPlugin],
          // The query builder open beside the editor where there is room for both.
          visiblePlugin: window.innerWidth >= 1100 ? explorerPlugin : undefined,
          defaultTabs: examples.map((e) => ({ query: e.query })),
          defaultEditorToolsVisibility: false,
          isHeadersEditorEnabled: true,
          shouldPersistHeaders: false,
        },
        React.createElement(GraphiQL.Logo, null, "fincap"),
      ),
    );
    return current;
  }

  bar.form.addEventListener("submit", (event) => {
    event.preventDefault();
    const secret = bar.key.value.trim();
    if (!HEADER_TEXT.test(secret) || /\s/.test(secret)) {
      showError("That key holds characters no API key has; paste it again.");
      return;
    }
    sessionStorage.setItem(OWN_KEY, JSON.stringify({ secret }));
    sessionStorage.removeItem(OWN_WORKSPACE);
    bar.key.value = "";
    showError("");
    renderBar(render());
  });
  bar.forget.addEventListener("click", () => {
    sessionStorage.removeItem(OWN_KEY);
    sessionStorage.removeItem(OWN_WORKSPACE);
    renderBar(render());
  });
  bar.workspace.addEventListener("change", () => {
    sessionStorage.setItem(OWN_WORKSPACE, JSON.stringify(bar.workspace.value));
    render();
  });

  renderBar(render());
})();
