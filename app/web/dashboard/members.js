// Who belongs to this workspace: list, invite (the one-time code shown once), change a role,
// remove, cancel an invitation. The server decides who may do what (members.* capabilities);
// this screen only hides what the signed-in role cannot do and says why, and shows the
// server's own words when it refuses (e.g. the last owner).

import * as api from "./api.js";
import { h, clear, announce, errorBox, confirmInPlace } from "./dom.js";
import { loadWithWorkspace, WORKSPACES } from "./state.js";

const ROLES = ["member", "admin", "owner"];
const MEMBER_FIELDS = "userId email role joinedAt isYou";
const INVITATION_FIELDS = "email role createdAt expiresAt";
const MEMBERS_QUERY = `query Members {
  ${WORKSPACES}
  workspace { id name }
  membersList { members { ${MEMBER_FIELDS} } invitations { ${INVITATION_FIELDS} } } }`;
const MANAGERS_ONLY = "Only owners and admins manage members; ask one of them.";

export async function membersView({ rerender }) {
  const data = await loadWithWorkspace(MEMBERS_QUERY, {});
  if (!data.membersList) throw new Error("This sign-in may not read the workspace's members");
  const { members, invitations } = data.membersList;
  const myRole = members.find((m) => m.isYou)?.role || "member";
  const manager = myRole === "owner" || myRole === "admin";
  return h(
    "div",
    {},
    h("h1", {}, "Members"),
    h("p", {}, `People in ${data.workspace.name}. You are ${article(myRole)} ${myRole}.`),
    manager ? inviteForm(myRole, rerender) : h("p", { class: "hint", id: "members-readonly" }, MANAGERS_ONLY),
    h("h2", {}, "People"),
    memberTable(members, myRole, rerender),
    manager ? invitationList(invitations, myRole, rerender) : null,
  );
}

function article(role) {
  return role === "owner" || role === "admin" ? "an" : "a";
}

// Which roles the signed-in person may give (only an owner makes or changes an owner).
function grantable(myRole) {
  return myRole === "owner" ? ROLES : ROLES.filter((r) => r !== "owner");
}

function inviteForm(myRole, rerender) {
  const email = h("input", { id: "invite-email", type: "email", required: true, maxlength: "320", autocomplete: "off" });
  const role = h("select", { id: "invite-role" }, grantable(myRole).map((r) => h("option", { value: r }, r)));
  const result = h("div", { id: "invite-result", "aria-live": "polite" });
  return h(
    "form",
    {
      class: "panel",
      id: "invite-form",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const answer = (
            await api.data(
              `mutation Invite($input: InviteMemberInput!) { membersInvite(input: $input) { emailed code emailError invitation { ${INVITATION_FIELDS} } } }`,
              { input: { email: email.value.trim(), role: role.value } },
            )
          ).membersInvite;
          clear(result, invitedNotice(answer, rerender));
          announce(`${answer.invitation.email} invited`);
        } catch (error) {
          clear(result, errorBox(error));
        }
      },
    },
    h("h2", {}, "Invite someone"),
    h("div", { class: "field" }, h("label", { for: "invite-email" }, "E-mail address"), email),
    h("div", { class: "field" }, h("label", { for: "invite-role" }, "Role"), role),
    h("button", { type: "submit", class: "primary" }, "Invite"),
    result,
  );
}

function invitedNotice(answer, rerender) {
  const who = answer.invitation.email;
  const done = h("button", { type: "button", onclick: rerender }, "Done");
  if (answer.emailed) {
    return h("div", {}, h("p", { class: "ok" }, `Invitation e-mailed to ${who}.`), done);
  }
  const code = h("output", { id: "invite-code", class: "secret" }, answer.code);
  return h(
    "div",
    {},
    answer.emailError ? h("p", { class: "error" }, `The e-mail was not sent: ${answer.emailError}`) : null,
    h("p", { class: "ok" }, `Give ${who} this code; it is shown only now and works once, for 7 days.`),
    code,
    h(
      "p",
      { class: "hint" },
      "Signed in with that address, they accept with ",
      h("code", {}, `fincap members accept-invite --code ${answer.code}`),
      " or members.accept-invite in any face.",
    ),
    h("button", { type: "button", onclick: () => navigator.clipboard?.writeText(answer.code).then(() => announce("Copied")) }, "Copy"),
    done,
  );
}

function memberTable(members, myRole, rerender) {
  const manager = myRole === "owner" || myRole === "admin";
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { id: "members" },
      h("thead", {}, h("tr", {}, ["E-mail", "Role", "Joined", ""].map((t) => h("th", { scope: "col" }, t)))),
      h(
        "tbody",
        {},
        members.map((member) => {
          const label = member.email || member.userId;
          // Admins cannot change or remove an owner; the server refuses it too.
          const reason = !manager ? MANAGERS_ONLY : member.role === "owner" && myRole !== "owner" ? "Only an owner can change or remove an owner." : null;
          const status = h("div", { class: "row-status", "aria-live": "polite" });
          const select = h(
            "select",
            {
              "data-role-of": member.userId,
              "aria-label": `Role of ${label}`,
              disabled: Boolean(reason),
              title: reason,
              onchange: async () => {
                try {
                  await api.data(
                    `mutation Role($input: SetMemberRoleInput!) { membersSetRole(input: $input) { member { ${MEMBER_FIELDS} } } }`,
                    { input: { userId: member.userId, role: select.value } },
                  );
                  announce(`${label} is now ${select.value}`);
                  rerender();
                } catch (error) {
                  select.value = member.role; // the server said no: show the role it kept
                  clear(status, errorBox(error));
                }
              },
            },
            (reason ? ROLES : grantable(myRole).concat(member.role === "owner" && myRole !== "owner" ? ["owner"] : [])).map((r) =>
              h("option", { value: r, selected: r === member.role }, r),
            ),
          );
          const cell = h("td", {});
          const remove = h(
            "button",
            {
              type: "button",
              class: "danger",
              "data-remove": member.userId,
              // The name starts with the words shown (speech input users say what they see).
              "aria-label": member.isYou ? "Leave this workspace" : `Remove ${label}`,
              disabled: Boolean(reason),
              title: reason,
              onclick: () => confirmRemove(member, label, cell, remove, status, rerender),
            },
            member.isYou ? "Leave" : "Remove",
          );
          cell.append(remove);
          return h(
            "tr",
            { "data-member": member.userId },
            h("td", {}, label, member.isYou ? h("span", { class: "badge" }, "you") : null, status),
            h("td", {}, select, reason ? h("span", { class: "hint reason" }, ` ${reason}`) : null),
            h("td", {}, new Date(member.joinedAt).toLocaleDateString()),
            cell,
          );
        }),
      ),
    ),
  );
}

function confirmRemove(member, label, cell, button, status, rerender) {
  confirmInPlace(cell, button, {
    id: "confirm-remove",
    warning: "Their keys and sign-ins for this workspace stop working. ",
    yes: member.isYou ? "Yes, leave this workspace" : `Yes, remove ${label}`,
    no: "Keep",
    onYes: async () => {
      try {
        const mutation = member.isYou
          ? `mutation Leave { membersLeave(input: {}) { removed } }`
          : `mutation Remove($input: RemoveMemberInput!) { membersRemove(input: $input) { removed } }`;
        await api.data(mutation, member.isYou ? {} : { input: { userId: member.userId } });
        announce(`${label} removed`);
        if (member.isYou) {
          api.setWorkspace(null);
          location.hash = "#/";
        }
        rerender();
      } catch (error) {
        clear(cell, button);
        clear(status, errorBox(error));
      }
    },
  });
}

function invitationList(invitations, myRole, rerender) {
  if (!invitations.length) return h("p", { class: "empty", id: "no-invitations" }, "No open invitations.");
  return h(
    "div",
    {},
    h("h2", {}, "Open invitations"),
    h(
      "ul",
      { id: "invitations", class: "plain" },
      invitations.map((invitation) => {
        const status = h("span", { "aria-live": "polite" });
        const reason = invitation.role === "owner" && myRole !== "owner" ? "Only an owner can cancel an invitation to become owner." : null;
        return h(
          "li",
          { "data-invitation": invitation.email },
          `${invitation.email} as ${invitation.role}, until ${new Date(invitation.expiresAt).toLocaleDateString()} `,
          h(
            "button",
            {
              type: "button",
              "data-cancel": invitation.email,
              "aria-label": `Cancel the invitation of ${invitation.email}`,
              disabled: Boolean(reason),
              title: reason,
              onclick: async () => {
                try {
                  await api.data(`mutation Cancel($input: CancelInviteInput!) { membersCancelInvite(input: $input) { cancelled } }`, {
                    input: { email: invitation.email },
                  });
                  announce(`Invitation of ${invitation.email} cancelled`);
                  rerender();
                } catch (error) {
                  clear(status, errorBox(error));
                }
              },
            },
            "Cancel invitation",
          ),
          status,
        );
      }),
    ),
  );
}
