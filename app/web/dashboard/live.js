// Live document events: one Server-Sent Events stream (GET /v1/events) per tab, shared by the
// views that listen (upload, overview).
//
// The dashboard's credential is a bearer (an API key or an OAuth access token in
// sessionStorage). EventSource cannot send an Authorization header, and a credential in the
// address would end up in logs and history, so the stream is read with fetch and parsed here
// (the format is four lines of rules). After a drop it reconnects with Last-Event-ID, so
// nothing is missed; a 401 first refreshes the sign-in the way every GraphQL call does.
// When the stream cannot be had at all (status "failed"), views fall back to polling.

import * as api from "./api.js";

const EVENTS = "/v1/events";
const RECENT = 200; // documents whose latest event is remembered (an upload may finish first)
const listeners = new Set();
const recent = new Map(); // documentId → its latest event
let stream = null; // {controller, orgId, opened: Promise}
let lastId = null;
let status = "idle"; // idle | connecting | open | failed
let failures = 0;

// For bench/events.py and the tests: events received, and per document its events' arrival
// times (documentId → {type: Date.now()}); the stream's status.
window.__fincapLive = { received: 0, times: {}, status: "idle" };

export function liveStatus() {
  return status;
}

function setStatus(value) {
  status = value;
  window.__fincapLive.status = value;
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
  if (stream) stream.controller.abort(); // another workspace: another stream
  if (stream && stream.orgId !== orgId) lastId = null;
  const controller = new AbortController();
  let markOpen;
  const opened = new Promise((resolve) => (markOpen = resolve));
  stream = { controller, orgId, opened };
  run(controller.signal, markOpen);
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
