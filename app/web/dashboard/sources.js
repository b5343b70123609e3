// The Sources page: where documents come in besides an upload. The workspace's receiving e-mail
// address (workspaces.get-inbound-address; copy; rotate, after a confirmation, when it leaked:
// the retired address is said), its WhatsApp numbers (whatsapp.*: register one → the code that
// number sends to verify, pending until it does; list; remove) and its connected IMAP mailboxes
// (mailboxes.*: list, read now, disconnect). What the signed-in role may not do is not offered:
// numbers and rotation are owners' and admins' (MANAGERS in the registry).

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace, moment } from "./dom.js";
import { state, loadWithWorkspace, WORKSPACES } from "./state.js";

export const SOURCES_PATH = "#/sources";
const ADDRESS_FIELDS = "address createdAt rotatedAt retiredAddress";
const SENDER_FIELDS = "phoneNumber status updatedAt expiresAt";
const MAILBOX_FIELDS = "id server port username folder status lastError lastErrorAt lastPolledAt imported";
const SOURCES_QUERY = `query Sources {
  ${WORKSPACES}
  workspace { id name }
  workspacesGetInboundAddress { ${ADDRESS_FIELDS} }
  whatsappListSenders { senders { ${SENDER_FIELDS} } }
  mailboxesList { mailboxes { ${MAILBOX_FIELDS} } }
}`;
const ROTATE = `mutation RotateAddress { workspacesRotateInboundAddress { ${ADDRESS_FIELDS} } }`;
const REGISTER = `mutation RegisterSender($input: RegisterWhatsAppSenderInput!) { whatsappRegisterSender(input: $input) { ${SENDER_FIELDS} verificationCode } }`;
const REMOVE = `mutation RemoveSender($input: RemoveWhatsAppSenderInput!) { whatsappRemoveSender(input: $input) { phoneNumber removed } }`;
const POLL = `mutation PollMailbox($input: MailboxRefInput!) { mailboxesPoll(input: $input) { mailbox { ${MAILBOX_FIELDS} } imported } }`;
const DISCONNECT = `mutation DisconnectMailbox($input: MailboxRefInput!) { mailboxesDisconnect(input: $input) { id disconnected } }`;

const MANAGERS = ["owner", "admin"];
const MANAGERS_ONLY = "Only owners and admins change this; ask one of them.";

function panel(id, title, ...children) {
  return h("section", { class: "panel", id, "aria-labelledby": `${id}-h` }, h("h2", { id: `${id}-h` }, title), ...children);
}

export async function sourcesView() {
  const data = await loadWithWorkspace(SOURCES_QUERY);
  const role = state.workspaces.find((w) => w.id === data.workspace.id)?.role || "member";
  const manager = MANAGERS.includes(role) && api.allows("write_integrations");
  const status = h("p", { id: "sources-status", role: "status" });
  const say = (text) => {
    status.textContent = text;
    announce(text);
  };
  return h(
    "div",
    {},
    h("h1", {}, "Sources"),
    h("p", { class: "hint" }, "Besides an upload, documents come in by e-mail, from WhatsApp and from connected mailboxes. What each sends becomes a document here, read like an upload."),
    status,
    addressPanel(data.workspacesGetInboundAddress, manager, say),
    sendersPanel(data.whatsappListSenders, manager, say),
    mailboxesPanel(data.mailboxesList, role, say),
  );
}

// -- the receiving address -------------------------------------------------------------

function addressPanel(inbound, manager, say) {
  if (!inbound) return panel("inbound", "E-mail", h("p", { class: "hint" }, "This sign-in may not read the workspace's receiving address."));
  const box = h("div", {});
  const paint = (found, rotated = false) => {
    const code = h("code", { id: "inbound-address", class: "secret" }, found.address);
    const copy = h("button", { type: "button", id: "inbound-copy" }, "Copy address");
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(found.address);
        say("Address copied");
      } catch {
        // No clipboard here (an insecure origin, a refusal): the address selected, for Ctrl+C.
        getSelection().selectAllChildren(code);
        say("Copy did not work here: the address is selected, press Ctrl+C");
      }
    });
    const controls = h("div", { class: "actions" }, copy);
    if (manager) {
      const rotate = h("button", { type: "button", id: "inbound-rotate" }, "Replace with a new address");
      const cell = h("span", {}, rotate);
      rotate.addEventListener("click", () =>
        confirmInPlace(cell, rotate, {
          id: "inbound-rotate-yes",
          warning: "Replace it? Mail to the current address is refused from then on; tell whoever sends to it. ",
          yes: "Replace",
          no: "Keep",
          onYes: async () => {
            try {
              const next = (await api.data(ROTATE)).workspacesRotateInboundAddress;
              paint(next, true);
              say(`New address ${next.address}; ${next.retiredAddress} no longer receives`);
              box.querySelector("#inbound-copy").focus();
            } catch (failure) {
              clear(cell, rotate, errorBox(failure));
            }
          },
        }),
      );
      controls.append(cell);
    } else {
      controls.append(h("span", { class: "hint" }, MANAGERS_ONLY));
    }
    clear(
      box,
      h("p", {}, "Forward receipts and invoices, or have them sent, to:"),
      code,
      controls,
      // The retired address is in the rotation's answer only; later, when it changed.
      found.retiredAddress
        ? h("p", { class: rotated ? "ok" : "meta", id: "inbound-retired" }, `Replaced ${moment(found.rotatedAt, "never")}: mail to ${found.retiredAddress} is refused.`)
        : found.rotatedAt
          ? h("p", { class: "meta", id: "inbound-retired" }, `Last replaced ${moment(found.rotatedAt, "never")}: mail to the earlier addresses is refused.`)
          : null,
    );
  };
  paint(inbound);
  return panel("inbound", "E-mail", box);
}

// -- WhatsApp numbers -------------------------------------------------------------------

function sendersPanel(listed, manager, say) {
  if (!manager || !listed) return panel("whatsapp", "WhatsApp", h("p", { class: "hint", id: "whatsapp-readonly" }, "Photos and PDFs sent from a registered number to the workspace's WhatsApp business number become documents here. ", MANAGERS_ONLY));
  const list = h("ul", { class: "source-list", id: "senders" });
  const empty = h("p", { class: "empty", id: "no-senders" }, "No number registered yet.");
  const showEmpty = () => (empty.hidden = list.children.length > 0);
  const itemOf = (sender) => {
    const active = sender.status === "active";
    const remove = h("button", { type: "button", class: "sender-remove danger", "aria-label": `Remove +${sender.phoneNumber}` }, "Remove");
    const cell = h("span", {}, remove);
    const item = h(
      "li",
      { "data-phone": sender.phoneNumber, "data-status": sender.status },
      h("span", { class: "num" }, `+${sender.phoneNumber}`),
      " ",
      h("span", { class: `badge ${active ? "" : "warn"}` }, active ? "Verified" : "Waiting for its code"),
      " ",
      h("span", { class: "meta" }, active ? `since ${moment(sender.updatedAt, "never")}` : `until ${moment(sender.expiresAt, "never")}`),
      " ",
      cell,
    );
    remove.addEventListener("click", () =>
      confirmInPlace(cell, remove, {
        id: `sender-remove-yes-${sender.phoneNumber}`,
        warning: `Remove +${sender.phoneNumber}? What it sends is ignored from then on; its documents stay. `,
        yes: "Remove",
        no: "Keep",
        onYes: async () => {
          try {
            await api.data(REMOVE, { input: { phoneNumber: sender.phoneNumber } });
            item.remove();
            showEmpty();
            say(`Removed +${sender.phoneNumber}`);
            phone.focus();
          } catch (failure) {
            clear(cell, remove, errorBox(failure));
          }
        },
      }),
    );
    return item;
  };
  for (const sender of listed.senders) list.append(itemOf(sender));
  showEmpty();

  const phone = h("input", { id: "sender-phone", type: "tel", autocomplete: "off", required: true, placeholder: "+49 170 1234567", "aria-describedby": "sender-hint" });
  const error = h("p", { class: "error", role: "alert" });
  const code = h("div", { id: "sender-code", role: "status" });
  const form = h(
    "form",
    {
      class: "inline-edit",
      id: "sender-form",
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = "";
        try {
          const sender = (await api.data(REGISTER, { input: { phoneNumber: phone.value } })).whatsappRegisterSender;
          list.querySelector(`li[data-phone="${sender.phoneNumber}"]`)?.remove();
          list.append(itemOf(sender));
          showEmpty();
          phone.value = "";
          clear(
            code,
            sender.verificationCode
              ? h(
                  "p",
                  {},
                  `To verify +${sender.phoneNumber}, send this code from that number to the workspace's WhatsApp business number by ${moment(sender.expiresAt, "never")} (shown this once): `,
                  h("code", { class: "secret", id: "sender-code-value" }, sender.verificationCode),
                )
              : h("p", {}, `+${sender.phoneNumber} is already verified.`),
          );
          say(sender.verificationCode ? `+${sender.phoneNumber} registered: it waits for its code` : `+${sender.phoneNumber} is already verified`);
        } catch (failure) {
          error.textContent = failure.message;
        }
      },
    },
    h("label", { for: "sender-phone" }, "Register a number"),
    phone,
    h("button", { type: "submit", class: "primary" }, "Register"),
  );
  return panel(
    "whatsapp",
    "WhatsApp",
    h("p", { class: "hint", id: "sender-hint" }, "Photos and PDFs sent from a registered number to the workspace's WhatsApp business number become documents here. With the country code; the number proves it is yours by sending the code shown."),
    form,
    error,
    code,
    empty,
    list,
  );
}

// -- mailboxes ---------------------------------------------------------------------------

function mailboxesPanel(listed, role, say) {
  if (!listed) return panel("mailboxes", "Mailboxes", h("p", { class: "hint" }, "This sign-in may not read the workspace's mailboxes."));
  const mayPoll = ["owner", "admin", "member"].includes(role) && api.allows("write_integrations");
  const mayDisconnect = MANAGERS.includes(role) && api.allows("write_integrations");
  const list = h("ul", { class: "source-list", id: "mailboxes" });
  const itemOf = (mailbox) => {
    const item = h("li", { "data-mailbox": mailbox.id, "data-status": mailbox.status });
    const paint = () => {
      const error = h("span", { class: "error", role: "alert" });
      const poll = mayPoll ? h("button", { type: "button", class: "mailbox-poll" }, "Read now") : null;
      poll?.addEventListener("click", async () => {
        poll.disabled = true;
        try {
          const done = (await api.data(POLL, { input: { id: mailbox.id } })).mailboxesPoll;
          Object.assign(mailbox, done.mailbox);
          paint();
          say(`${mailbox.username}: ${done.imported.toLocaleString()} new document${done.imported === 1 ? "" : "s"}`);
        } catch (failure) {
          poll.disabled = false;
          error.textContent = failure.message;
        }
      });
      const remove = mayDisconnect ? h("button", { type: "button", class: "mailbox-disconnect danger" }, "Disconnect") : null;
      const cell = h("span", {}, remove);
      remove?.addEventListener("click", () =>
        confirmInPlace(cell, remove, {
          id: `mailbox-disconnect-yes-${mailbox.id}`,
          warning: `Disconnect ${mailbox.username}? It is no longer read and its password is deleted; its documents stay. `,
          yes: "Disconnect",
          no: "Keep",
          onYes: async () => {
            try {
              await api.data(DISCONNECT, { input: { id: mailbox.id } });
              item.remove();
              say(`Disconnected ${mailbox.username}`);
            } catch (failure) {
              clear(cell, remove, errorBox(failure));
            }
          },
        }),
      );
      item.dataset.status = mailbox.status;
      clear(
        item,
        h("strong", {}, mailbox.username),
        ` on ${mailbox.server}:${mailbox.port}, folder ${mailbox.folder}. `,
        h("span", { class: "meta" }, `Last read ${moment(mailbox.lastPolledAt, "never")}; ${mailbox.imported.toLocaleString()} messages brought in.`),
        mailbox.status === "error" ? h("p", { class: "error" }, `Reading failed (${moment(mailbox.lastErrorAt, "never")}): ${mailbox.lastError || "no reason given"}`) : null,
        h("span", { class: "actions" }, poll, cell),
        error,
      );
    };
    paint();
    return item;
  };
  for (const mailbox of listed.mailboxes) list.append(itemOf(mailbox));
  return panel(
    "mailboxes",
    "Mailboxes",
    listed.mailboxes.length ? list : h("p", { class: "empty", id: "no-mailboxes" }, "No mailbox connected. Owners and admins connect one through the API or the command line (mailboxes.connect): an IMAP server, its user and password."),
  );
}
