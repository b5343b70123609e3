// Upload by drag and drop (or the file picker): per file a progress bar while it is sent,
// then its processing status as the live event stream tells it (live.js), until the pipeline
// has finished with it. Only when the stream cannot be opened is the status polled instead.

import * as api from "./api.js";
import * as live from "./live.js";
import { h, money, announce } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

const ACCEPT = "image/jpeg,image/png,image/gif,image/webp,image/bmp,image/tiff,application/pdf";
const MAX_BYTES = 10 * 1024 * 1024;
const FINAL = new Set(["processed", "warning", "skipped", "failed"]);
const POLL_MS = 1000;

const STATUS_QUERY = `query Status($input: GetDocumentInput!) {
  documentsGet(input: $input) { document { id processingStatus processingReason merchant amount currency docDate duplicateOfId } } }`;

function readAsDataUrl(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file); // files.upload accepts a data: URL as base64Data
  });
}

export async function uploadView() {
  await loadWithWorkspace(`query Here { ${WORKSPACES} workspace { id name preferredCurrency } }`, {});
  const list = h("ul", { class: "uploads", id: "uploads", "aria-live": "polite" });
  const input = h("input", { id: "file-input", type: "file", multiple: true, accept: ACCEPT, class: "visually-hidden" });
  input.addEventListener("change", () => {
    send([...input.files], list);
    input.value = "";
  });
  const zone = h(
    "div",
    { class: "drop-zone", id: "drop-zone" },
    h("p", {}, "Drop receipts and invoices here"),
    h("p", { class: "hint" }, "JPEG, PNG, GIF, WebP, BMP, TIFF or PDF, up to 10 MB each"),
    h("label", { for: "file-input", class: "button primary", tabindex: "0", onkeydown: (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        input.click();
      }
    } }, "Choose files"),
    input,
  );
  zone.addEventListener("dragover", (event) => {
    event.preventDefault();
    zone.classList.add("over");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("over"));
  zone.addEventListener("drop", (event) => {
    event.preventDefault();
    zone.classList.remove("over");
    send([...event.dataTransfer.files], list);
  });
  return h("div", {}, h("h1", {}, "Upload"), zone, list);
}

function send(files, list) {
  for (const file of files) {
    const progress = h("progress", { max: "1", value: "0", "aria-label": `Sending ${file.name}` });
    const status = h("span", { class: "status" }, "waiting");
    const item = h("li", { class: "upload", "data-file": file.name }, h("strong", {}, file.name), progress, status);
    list.prepend(item);
    upload(file, progress, status, item);
  }
}

async function upload(file, progress, status, item) {
  const setStatus = (text, kind) => {
    status.textContent = text;
    item.dataset.status = kind;
  };
  if (file.size > MAX_BYTES) {
    setStatus("too large (over 10 MB)", "failed");
    return;
  }
  try {
    setStatus("sending", "sending");
    await live.connected(); // listening before the upload: its events cannot be missed
    const dataUrl = await readAsDataUrl(file);
    const accepted = await api.uploadFile(file, dataUrl, (fraction) => {
      progress.value = fraction;
    });
    progress.value = 1;
    setStatus("queued", "queued");
    await follow(accepted.documentId, setStatus, item);
  } catch (error) {
    setStatus(`failed: ${error.message}`, "failed");
    announce(`${file.name} failed`);
  }
}

function follow(documentId, setStatus, item) {
  return new Promise((resolve) => {
    const show = (doc) => {
      const state = doc.processingStatus || "processed";
      if (!FINAL.has(state)) {
        setStatus(state, state);
        return false;
      }
      const summary = [doc.merchant, doc.docDate, doc.amount != null ? money(doc.amount, doc.currency) : null].filter(Boolean).join(" · ");
      setStatus(`${state}${summary ? `: ${summary}` : ""}${doc.processingReason ? ` (${doc.processingReason})` : ""}`, state);
      item.append(" ", h("a", { href: `#/documents/${encodeURIComponent(doc.id)}` }, "Open"));
      announce(`${doc.merchant || "Document"} ${state}`);
      return true;
    };
    if (live.liveStatus() === "failed") {
      poll(documentId, show).then(resolve);
      return;
    }
    const seen = live.latest(documentId); // it may have finished before we got here
    if (seen?.document && show(seen.document)) {
      resolve();
      return;
    }
    const stop = live.onDocumentEvent((event) => {
      if (event.documentId !== documentId || !event.document) return;
      if (show(event.document)) {
        stop();
        resolve();
      }
    });
  });
}

// The fallback without the event stream: ask every POLL_MS until it has finished.
async function poll(documentId, show) {
  for (;;) {
    const data = await api.data(STATUS_QUERY, { input: { id: documentId } });
    if (show(data.documentsGet.document)) return;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
