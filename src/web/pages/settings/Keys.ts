// SSH and GPG keys (Forgejo's routers/web/user/setting/keys.go, `/user/settings/keys`): the
// account's keys, a form to add each kind (`type=ssh|gpg`, Forgejo's field) whose refusal is shown
// next to the field it concerns with what was typed kept, and deleting
// (`/user/settings/keys/delete`). The rules are the API's: KeysService (one key per fingerprint
// on the instance, unique titles) and GpgService (an identity among the activated addresses, or
// a signature over the verification token).
import { Effect } from "effect"
import { GpgService } from "../../../gpg/Service.ts"
import * as Errors from "../../../http/Errors.ts"
import { DEPLOY_TITLE_USED, KEY_USED, KeysService, TITLE_USED } from "../../../keys/Service.ts"
import { NAME_MAX } from "../../../lib/Names.ts"
import { type FieldErrors, field, formNotice, textArea } from "../../Form.ts"
import { empty, html } from "../../Html.ts"
import { icon } from "../../Icons.ts"
import { csrfField } from "../../Layout.ts"
import type { Web, WebContext } from "../../Web.ts"
import { buttonForm, SIGNED_IN, section, settingsPage } from "./Frame.ts"

const NOTICES: Readonly<Record<string, string>> = {
  "ssh-added": "The SSH key has been added.",
  "gpg-added": "The GPG key has been added.",
  "ssh-deleted": "The SSH key has been deleted.",
  "gpg-deleted": "The GPG key has been deleted."
}

const ALL = { page: 1, limit: 100, offset: 0 }
const date = (d: Date) => d.toISOString().slice(0, 10)

interface Typed {
  readonly ssh_title?: string
  readonly ssh_content?: string
  readonly gpg_content?: string
  readonly gpg_signature?: string
}

/** Which SSH field a KeysService refusal concerns. */
const sshField = (message: string) =>
  /^\[Title\]/.test(message) || message === TITLE_USED || message === DEPLOY_TITLE_USED ? "ssh_title" : "ssh_content"

export const KeySettingsPages = (web: Web) =>
  Effect.gen(function* () {
    const keys = yield* KeysService
    const gpg = yield* GpgService

    const keysPage = (ctx: WebContext, typed: Typed, errors: FieldErrors, status = 200) =>
      Effect.gen(function* () {
        const viewer = ctx.viewer!
        const ssh = yield* keys.listOf(viewer.user, ALL)
        const gpgKeys = yield* gpg.list(viewer, viewer.user, ALL)
        const sshRows =
          ssh.rows.length === 0
            ? html`<div class="Box-body color-fg-muted">There are no SSH keys on this account.</div>`
            : html`<ul>${ssh.rows.map(
                (key) => html`<li class="Box-row d-flex flex-items-center" data-testid="ssh-key">
  ${icon("key", 24)}
  <div class="ml-3 flex-auto min-width-0">
    <strong class="d-block wb-break-word" data-testid="ssh-key-title">${key.name}</strong>
    <code class="f6 color-fg-muted wb-break-all">${key.fingerprint}</code>
    <span class="d-block f6 color-fg-muted">Added on ${date(key.createdAt)}</span>
  </div>
  ${buttonForm(ctx, "/user/settings/keys/delete", { type: "ssh", id: String(key.id) }, html`${icon("trash")} Delete`, {
    danger: true,
    accessibleName: `Delete the SSH key ${key.name}`
  })}
</li>`
              )}</ul>`
        const gpgRows =
          gpgKeys.rows.length === 0
            ? html`<div class="Box-body color-fg-muted">There are no GPG keys on this account.</div>`
            : html`<ul>${gpgKeys.rows.map(
                (key) => html`<li class="Box-row d-flex flex-items-center" data-testid="gpg-key">
  ${icon(key.verified ? "verified" : "unverified", 24)}
  <div class="ml-3 flex-auto min-width-0">
    <strong class="d-block" data-testid="gpg-key-id">${key.key_id}</strong>
    ${key.emails.map((e) => html`<span class="d-block f6 wb-break-all">${e.email}${e.verified ? empty : html` (not activated)`}</span>`)}
    <span class="d-block f6 color-fg-muted">Subkeys: ${key.subkeys.map((s) => s.key_id).join(", ") || "none"}</span>
  </div>
  ${buttonForm(ctx, "/user/settings/keys/delete", { type: "gpg", id: String(key.id) }, html`${icon("trash")} Delete`, {
    danger: true,
    accessibleName: `Delete the GPG key ${key.key_id}`
  })}
</li>`
              )}</ul>`
        const token = gpg.token(viewer.user)
        return settingsPage(
          web,
          ctx,
          { path: "/user/settings/keys", title: "SSH / GPG keys", status },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}
${section(
  "SSH keys",
  html`${sshRows}
  <div class="Box-body border-top">
    <form method="post" action="/user/settings/keys" data-testid="add-ssh-key-form">
      ${csrfField(ctx)}
      <input type="hidden" name="type" value="ssh">
      ${field({ name: "ssh_title", label: "Title", value: typed.ssh_title ?? "", autocomplete: "off", required: true }, errors)}
      ${textArea({ name: "ssh_content", label: "Key", value: typed.ssh_content ?? "", rows: 5, code: true, required: true, placeholder: "Begins with 'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256', 'sk-ssh-ed25519@openssh.com' …" }, errors)}
      <button class="btn btn-primary" type="submit">${icon("plus")} Add SSH key</button>
    </form>
  </div>`,
  "ssh-keys"
)}
${section(
  "GPG keys",
  html`${gpgRows}
  <div class="Box-body border-top">
    <form method="post" action="/user/settings/keys" data-testid="add-gpg-key-form">
      ${csrfField(ctx)}
      <input type="hidden" name="type" value="gpg">
      ${textArea({ name: "gpg_content", label: "Public key", value: typed.gpg_content ?? "", rows: 6, code: true, required: true, placeholder: "Begins with '-----BEGIN PGP PUBLIC KEY BLOCK-----'", hint: "One of the key's identities must be an activated e-mail address of your account; otherwise sign the token below." }, errors)}
      ${textArea({ name: "gpg_signature", label: "Signature (optional)", value: typed.gpg_signature ?? "", rows: 4, code: true, hint: `An armored detached signature of the token ${token}, e.g. echo "${token}" | gpg -a --default-key KEYID --detach-sig` }, errors)}
      <button class="btn btn-primary" type="submit">${icon("plus")} Add GPG key</button>
    </form>
  </div>`,
  "gpg-keys"
)}`
        )
      })

    return [
      web.route("GET", "/user/settings/keys", SIGNED_IN, (ctx) => keysPage(ctx, {}, {})),
      web.route("POST", "/user/settings/keys", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const viewer = ctx.viewer!
          if (form.get("type") === "gpg") {
            const typed = { gpg_content: form.get("gpg_content") ?? "", gpg_signature: form.get("gpg_signature") ?? "" }
            if (typed.gpg_content.trim() === "") {
              return yield* keysPage(ctx, typed, { gpg_content: "Paste the armored public key." }, 422)
            }
            const added = yield* Effect.result(gpg.add(viewer, typed.gpg_content, typed.gpg_signature))
            if (added._tag === "Failure") {
              const message = added.failure.message
              const name =
                /signature/i.test(message) && typed.gpg_signature.trim() !== "" ? "gpg_signature" : "gpg_content"
              return yield* keysPage(ctx, typed, { [name]: message }, 422)
            }
            return web.redirect(ctx, "/user/settings/keys?done=gpg-added")
          }
          if (form.get("type") !== "ssh")
            return web.errorPage(ctx, 400, "Bad request", 'The key type must be "ssh" or "gpg".')
          const typed = { ssh_title: (form.get("ssh_title") ?? "").trim(), ssh_content: form.get("ssh_content") ?? "" }
          // The API's request schema bounds the title (`BoundedName`); the form is bounded the same.
          if (typed.ssh_title.length > NAME_MAX.keyTitle) {
            return yield* keysPage(ctx, typed, { ssh_title: `[Title]: MaxSize (${NAME_MAX.keyTitle})` }, 422)
          }
          const created = yield* Effect.result(keys.create(viewer, { title: typed.ssh_title, key: typed.ssh_content }))
          if (created._tag === "Failure") {
            const message = created.failure.message
            return yield* keysPage(
              ctx,
              typed,
              { [sshField(message)]: message === KEY_USED ? `${message}: this key is already on an account` : message },
              422
            )
          }
          return web.redirect(ctx, "/user/settings/keys?done=ssh-added")
        })
      ),
      web.route("POST", "/user/settings/keys/delete", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const viewer = ctx.viewer!
          const id = form.get("id") ?? ""
          const type = form.get("type")
          const removed = yield* Effect.result(
            type === "gpg"
              ? gpg.remove(viewer, id)
              : type === "ssh"
                ? keys.remove(viewer, id)
                : Effect.fail(Errors.notFound())
          )
          if (removed._tag === "Failure") {
            if (removed.failure instanceof Errors.NotFound) return web.notFound(ctx)
            return web.errorPage(
              ctx,
              Errors.statusOf(removed.failure) ?? 422,
              "The key was not deleted",
              removed.failure.message
            )
          }
          return web.redirect(ctx, `/user/settings/keys?done=${type}-deleted`)
        })
      )
    ]
  })
