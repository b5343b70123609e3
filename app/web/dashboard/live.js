// Live document events: one Server-Sent Events stream (GET /v1/events) per tab, shared by the
// views that listen (upload, overview, the Documents table and a document's page: follow.js).
//
// The dashboard's credential is a bearer (an API key or an OAuth access token in
// sessionStorage). EventSource cannot send an Authorization header, and a credential in the
// address would end up in logs and history, so the stream is read with fetch and parsed here
// (the format is four lines of rules). After a drop it reconnects with Last-Event-ID, so
// nothing is missed; a 401 first refreshes the sign-in the way every GraphQL call does.
// When the stream cannot be had at all (status "failed"), uploads fall back to polling their
// status; the other views stay as they were last read.
//
// One stream per browser and workspace, not per tab: over HTTP/1.1 a browser opens at most six
// connections to a server, so six tabs each holding a stream would leave a seventh unable to
// load anything. The tabs of a workspace elect a leader with a Web Lock; the leader reads the
// stream and relays each event to the others on a BroadcastChannel (same origin only, the same
// browser profile). When the leader's tab closes, its lock passes to another tab, which opens
// the stream from the last id it was relayed, so nothing is missed.

import * as api from "./api.js";

const EVENTS = "/v1/events";
const RECENT = 200; // documents whose latest event is remembered (an upload may finish first)
const listeners = new Set();
const recent = new Map(); // documentId → its latest event
let stream = null; // {controller, orgId, opened: Promise}
let lastId = null;
let status = "idle"; // idle | connecting | open | failed
let failures = 0;
const SHARED = "locks" in navigator && "BroadcastChannel" in window;

// For bench/events.py and the tests: events received, and per document its events' arrival
// times (documentId → {type: Date.now()}); the stream's status; whether this tab reads the
// stream ("leader") or is relayed it ("follower").
window.__fincapLive = { received: 0, times: {}, status: "idle", role: "none" };

export function liveStatus() {
  return status;
}

function setStatus(value) {
  status = value;
  window.__fincapLive.status = value;
  if (stream?.leading) stream.channel?.postMessage({ kind: "status", status: value });
}

// Call `listener(event)` for every event of the workspace; returns the function that stops it.
export function onDocumentEvent(listener) {
  listeners.add(listener);
  connect();
  return () => listeners.delete(listener);
}

// The latest event seen for a document (null if none yet).
export function latest(documentId) {
  return recent.get(documentId) || null;
}

// Resolves once the stream is open (or has failed): what happens after it is heard.
export function connected() {
  connect();
  return stream ? stream.opened : Promise.resolve();
}

function connect() {
  const orgId = api.session()?.orgId || null;
  if (stream && stream.orgId === orgId) return;
  if (stream) {
    lastId = null; // another workspace: another stream
    close();
  }
  const controller = new AbortController();
  let markOpen;
  const opened = new Promise((resolve) => (markOpen = resolve));
  stream = { controller, orgId, opened, leading: false, channel: null };
  if (!SHARED) {
    window.__fincapLive.role = "leader";
    run(controller.signal, markOpen);
    return;
  }
  const current = stream;
  const name = `fincap-events:${orgId}`;
  const channel = new BroadcastChannel(name);
  current.channel = channel;
  channel.onmessage = ({ data }) => {
    if (current.leading) {
      // A tab that just opened asks where the stream stands.
      if (data.kind === "ask") channel.postMessage({ kind: "status", status });
      return;
    }
    if (data.kind === "event") {
      if (data.id) lastId = data.id;
      deliver(data.event);
    } else if (data.kind === "status") {
      setStatus(data.status);
      if (data.status === "open" || data.status === "failed") markOpen();
    }
  };
  window.__fincapLive.role = "follower";
  channel.postMessage({ kind: "ask" });
  navigator.locks
    .request(name, { signal: controller.signal }, async () => {
      current.leading = true;
      window.__fincapLive.role = "leader";
      await run(controller.signal, markOpen);
    })
    .catch(() => {}); // aborted while waiting: this tab was left or changed workspace
}

// Signed out (or signing in elsewhere): this tab stops listening now, not at the server's next
// heartbeat; if it was the reader, another tab of the workspace takes over.
export function disconnect() {
  close();
  setStatus("idle");
}

function close() {
  if (!stream) return;
  stream.controller.abort();
  stream.channel?.close();
  stream = null;
}

async function run(signal, markOpen) {
  while (!signal.aborted) {
    setStatus("connecting");
    let response;
    try {
      const headers = { Accept: "text/event-stream", ...api.headers() };
      if (lastId) headers["Last-Event-ID"] = lastId;
      response = await fetch(EVENTS, { headers, signal, cache: "no-store" });
    } catch {
      if (signal.aborted) return;
      response = null;
    }
    if (response && response.status === 401) {
      // The same refresh as any GraphQL call (api.graphql refreshes an OAuth token on a 401).
      try {
        await api.graphql("query Alive { __typename }");
        continue;
      } catch {
        setStatus("failed");
        markOpen();
        return;
      }
    }
    if (!response || !response.ok || !response.body) {
      failures += 1;
      if (failures >= 3 || (response && response.status < 500 && response.status !== 429)) {
        setStatus("failed");
        markOpen();
        return;
      }
      await pause(1000 * failures, signal);
      continue;
    }
    setStatus("open");
    failures = 0;
    markOpen();
    try {
      await read(response.body, signal);
    } catch {
      // The connection dropped: reconnect below, from the last id.
    }
    if (!signal.aborted) await pause(500, signal);
  }
}

async function read(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!signal.aborted) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      dispatch(block);
    }
  }
  reader.cancel();
}

function dispatch(block) {
  let id = null;
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) continue; // a heartbeat
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (name === "id") id = value;
    else if (name === "data") data += data ? `\n${value}` : value;
  }
  if (!data) return;
  if (id) lastId = id;
  const event = JSON.parse(data);
  stream?.channel?.postMessage({ kind: "event", id, event });
  deliver(event);
}

function deliver(event) {
  if (event.documentId) {
    recent.delete(event.documentId);
    recent.set(event.documentId, event);
    if (recent.size > RECENT) recent.delete(recent.keys().next().value);
    const times = (window.__fincapLive.times[event.documentId] ||= {});
    times[event.type] = Date.now();
  }
  window.__fincapLive.received += 1;
  for (const listener of [...listeners]) listener(event);
}

// A page being left (a reload, another address, the back/forward cache) gives its stream's
// connection back at once: over HTTP/1.1 a browser holds at most six connections per server,
// and streams of pages already left would otherwise hold them until the server's next
// heartbeat, stalling the next page's requests. Shown again from the cache, it reconnects
// from the last id.
window.addEventListener("pagehide", disconnect); // a reader's lock passes to another tab
window.addEventListener("pageshow", (event) => {
  if (event.persisted && listeners.size) connect();
});

function pause(ms, signal) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// Run `fn` at most once per `ms`, after the last call (a burst of events: one refresh).
export function debounce(fn, ms) {
  let timer = null;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };
}
