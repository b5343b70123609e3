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
  // which the server rightly refuses, and which also hides a subscription from GraphiQL's
  // choice of transport (it would be POSTed instead of sent over the WebSocket): a name the
  // document does not define is replaced by the document's own when it has one operation (and
  // left out otherwise, so the server asks which to run).
  function ownOperation(params, options) {
    let document;
    try {
      document = GraphiQL.GraphQL.parse(params.query);
    } catch {
      return [params, options]; // not GraphQL: the server says what is wrong
    }
    const names = document.definitions
      .filter((d) => d.kind === "OperationDefinition")
      .map((d) => d.name && d.name.value);
    const own = { ...options, documentAST: document };
    if (params.operationName && names.includes(params.operationName)) return [params, own];
    // GraphiQL picks the WebSocket only for a subscription it finds by name: a document of one
    // named operation is sent with that name.
    const { operationName, ...rest } = params;
    return [names.length === 1 && names[0] ? { ...rest, operationName: names[0] } : rest, own];
  }

  // Subscriptions over graphql-transport-ws, the protocol the server speaks on the same path:
  // one socket per subscription, the credential in connection_init (a browser cannot put
  // headers on a WebSocket). GraphiQL calls subscribe(params, sink) and the function returned
  // when the person stops the operation.
  function socketClient(current) {
    return {
      subscribe(payload, sink) {
        const url = new URL(ENDPOINT, location.href);
        url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
        const socket = new WebSocket(url, "graphql-transport-ws");
        let ended = false;
        const end = (settle) => {
          if (!ended) {
            ended = true;
            settle();
          }
        };
        const send = (message) => socket.send(JSON.stringify(message));
        socket.onopen = () => send({ type: "connection_init", payload: authHeaders(current) });
        socket.onmessage = ({ data }) => {
          const message = JSON.parse(data);
          if (message.type === "connection_ack") send({ id: "1", type: "subscribe", payload });
          else if (message.type === "ping") send({ type: "pong" });
          else if (message.type === "next") sink.next(message.payload);
          else if (message.type === "complete") end(() => sink.complete());
          else if (message.type === "error") end(() => sink.next({ errors: message.payload }));
        };
        socket.onclose = (event) =>
          end(() =>
            event.code === 1000
              ? sink.complete()
              : sink.error(new Error(`The server closed the subscription: ${event.code} ${event.reason}`.trim())),
          );
        return () => {
          ended = true;
          if (socket.readyState === WebSocket.OPEN) send({ id: "1", type: "complete" });
          socket.close(1000);
        };
      },
    };
  }

  // GraphiQL's own fetcher, its requests given the credential's headers (the headers editor
  // can still override them) and checked before they leave: a header a browser would refuse
  // becomes a message that says which one, not "Error fetching schema".
  function fetcherFor(current) {
    const send = GraphiQL.createFetcher({
      url: ENDPOINT,
      wsClient: socketClient(current),
      fetch: async (url, init) => {
        const headers = { ...authHeaders(current), ...((init && init.headers) || {}) };
        for (const [name, value] of Object.entries(headers)) {
          if (!HEADER_TEXT.test(String(value))) {
            const message = `The ${name} header holds a character no HTTP header may carry; type it in plain ASCII.`;
            showError(message);
            throw new Error(message);
          }
        }
        const response = await fetch(url, { ...init, headers });
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
    return (params, options) => send(...ownOperation(params, options));
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

  // What GraphiQL 3 and its query builder leave out for assistive technology (axe-core,
  // tests/web): names for the editors' text areas and the builder's fields, scroll areas the
  // keyboard reaches, and tabs that hold buttons (a tab with a close button inside, a "new tab"
  // button in the tab list) shown as the toolbar of buttons they are, the open one marked
  // current. Applied again whenever React redraws; an attribute is only written when it
  // differs, so the observer settles.
  const EDITOR_NAMES = [
    [".graphiql-query-editor", "Operation editor"],
    [".graphiql-editor-tool .graphiql-editor:nth-child(1)", "Variables editor (JSON)"],
    [".graphiql-editor-tool .graphiql-editor:nth-child(2)", "Headers editor (JSON)"],
    [".result-window", "Response (read only)"],
  ];

  function set(element, name, value) {
    if (value === null) {
      if (element.hasAttribute(name)) element.removeAttribute(name);
    } else if (element.getAttribute(name) !== value) {
      element.setAttribute(name, value);
    }
  }

  function accessible(container) {
    for (const [selector, name] of EDITOR_NAMES) {
      for (const area of container.querySelectorAll(`${selector} .CodeMirror textarea`)) {
        set(area, "aria-label", name);
      }
    }
    // An editor taller than its pane scrolls: its scroll area takes the keyboard too.
    for (const scroller of container.querySelectorAll(".CodeMirror-scroll")) {
      set(scroller, "tabindex", "0");
    }
    // The builder's value fields, named by their argument ("first", "gte").
    for (const input of container.querySelectorAll(".graphiql-explorer-root input:not([placeholder])")) {
      const holder = input.closest("[data-arg-name]");
      if (holder) set(input, "aria-label", `Value of ${holder.dataset.argName}`);
    }
    for (const select of container.querySelectorAll(".variable-editor-title > select")) {
      set(select, "aria-label", "Kind of operation to add");
    }
    for (const list of container.querySelectorAll("ul.graphiql-tabs")) {
      set(list, "role", "toolbar");
      for (const item of list.querySelectorAll(":scope > li")) {
        const open = item.classList.contains("graphiql-tab-active");
        set(item, "role", "none");
        set(item, "aria-selected", null);
        const button = item.querySelector(".graphiql-tab-button");
        if (button) set(button, "aria-current", open ? "true" : null);
      }
    }
  }

  function keepAccessible(container) {
    let pending = false;
    const observer = new MutationObserver(() => {
      if (pending) return;
      pending = true;
      requestAnimationFrame(() => {
        pending = false;
        accessible(container);
      });
    });
    observer.observe(container, {
      childList: true,
      subtree: true,
      attributes: true,
      attributeFilter: ["class", "role", "aria-selected"],
    });
    accessible(container);
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

  keepAccessible(document.getElementById("graphiql"));
  renderBar(render());
})();
