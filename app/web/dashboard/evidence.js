// The original with a box around where each extracted field was read. The API gives every box as
// [x0, y0, x1, y1] fractions of its page (from the top left, the page as a person sees it: a
// photo turned by its EXIF tag, a PDF page as displayed), so the boxes are positioned in percent
// of the picture and stay right at any size the picture is drawn. A photo is shown itself (the
// browser turns it by its EXIF tag too); a PDF, or an image the browser cannot draw (TIFF, BMP),
// through its preview, which is the first page: boxes of later pages are named, not drawn.

import * as api from "./api.js";
import { h } from "./dom.js";

const DRAWN_BY_BROWSER = ["image/jpeg", "image/png", "image/gif", "image/webp"];

export const FIELD_LABELS = {
  merchant: "Merchant",
  amount: "Amount",
  currency: "Currency",
  docDate: "Date",
  invoiceId: "Invoice number",
  subtotal: "Subtotal",
  taxAmount: "Tax",
};

function onFirstPicture(e) {
  return !e.page || e.page === 1;
}

// An <img> src for the document's picture: the original photo, or the server's preview.
async function pictureUrl(doc, onPlaceholder) {
  if (DRAWN_BY_BROWSER.includes(doc.file.mimeType)) {
    const response = await fetch(`/v1/files/${encodeURIComponent(doc.id)}`, { headers: api.headers() });
    if (response.ok) return { url: URL.createObjectURL(await response.blob()), original: true };
  }
  return { url: await api.thumbnailUrl(doc.id, onPlaceholder), original: false };
}

export function evidencePreview(doc) {
  const boxed = (doc.evidence || []).filter((e) => e.box && e.box.length === 4);
  const drawn = boxed.filter(onFirstPicture);
  const elsewhere = boxed.filter((e) => !onFirstPicture(e));
  const boxes = new Map();
  const legendItems = new Map();
  const frame = h("div", { class: "evidence-frame", id: "evidence-frame" });
  const preview = h("div", { class: "preview" }, doc.file ? h("p", { class: "hint" }, "Loading the original…") : h("p", { class: "hint" }, "No original file is stored for this document."));

  function highlight(field, on) {
    boxes.get(field)?.classList.toggle("active", on);
    legendItems.get(field)?.classList.toggle("active", on);
  }

  const show = (url) => {
    const img = h("img", { src: url, alt: `The original: ${doc.file.fileName}`, id: "original" });
    frame.replaceChildren(img);
    for (const e of drawn) {
      const [x0, y0, x1, y1] = e.box;
      const box = h("span", {
        class: `evidence-box field-${e.field}`,
        "data-field": e.field,
        title: `${FIELD_LABELS[e.field] || e.field}${e.text ? `: ${e.text}` : ""}`,
      });
      // Set through the style object: the page's CSP refuses style attributes.
      Object.assign(box.style, { left: `${x0 * 100}%`, top: `${y0 * 100}%`, width: `${(x1 - x0) * 100}%`, height: `${(y1 - y0) * 100}%` });
      box.addEventListener("mouseenter", () => highlight(e.field, true));
      box.addEventListener("mouseleave", () => highlight(e.field, false));
      boxes.set(e.field, box);
      frame.append(box);
    }
    preview.replaceChildren(frame, legend());
  };

  function legend() {
    if (!boxed.length) return h("p", { class: "hint" }, "No field has a place on the original (typed in, or read without positions).");
    const items = [
      ...drawn.map((e) => {
        const item = h(
          "li",
          { class: `legend-item field-${e.field}`, "data-field": e.field, tabindex: "0" },
          h("span", { class: "swatch", "aria-hidden": "true" }),
          FIELD_LABELS[e.field] || e.field,
          e.text ? h("span", { class: "hint" }, ` “${e.text}”`) : null,
        );
        for (const [type, on] of [["mouseenter", true], ["mouseleave", false], ["focus", true], ["blur", false]]) {
          item.addEventListener(type, () => highlight(e.field, on));
        }
        legendItems.set(e.field, item);
        return item;
      }),
      ...elsewhere.map((e) => h("li", { class: "legend-item", "data-field": e.field }, `${FIELD_LABELS[e.field] || e.field}: on page ${e.page} (not drawn; the preview is page 1)`)),
    ];
    return h("div", { class: "legend" }, h("p", { class: "hint" }, "Where each field was read:"), h("ul", { id: "evidence-legend" }, items));
  }

  if (doc.file) {
    pictureUrl(doc, show).then(({ url }) => {
      if (url) show(url);
      else preview.replaceChildren(h("p", { class: "hint" }, "No preview of the original is available."));
    });
  }
  return { element: preview, highlight, hasBox: (field) => drawn.some((e) => e.field === field) };
}
