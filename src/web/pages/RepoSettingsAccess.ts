// Who else may use a repository: its collaborators (Forgejo's routers/web/repo/setting/
// collaboration.go, `/{owner}/{repo}/settings/collaboration`: list, add with a permission, change
// it, remove) and its deploy keys (setting/deploy_key.go, `/{owner}/{repo}/settings/keys`: list,
// add read-only or writable, delete). The rules are the API's: the collaborator rules of
// src/repos/Collaborators.ts (blocks included) and KeysService's deploy-key rules; a refusal is
// shown next to the field with what was typed kept.
import { Effect, Option } from "effect"
import * as Errors from "../../http/Errors.ts"
import { DEPLOY_TITLE_USED, KEY_USED, KeysService, TITLE_USED } from "../../keys/Service.ts"
import { NAME_MAX } from "../../lib/Names.ts"
import { COLLABORATOR_MODES, makeAddCollaborator } from "../../repos/Collaborators.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { checkbox, type FieldErrors, field, formNotice, select, textArea } from "../Form.ts"
import { html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { makeRepoSettingsFrame } from "../RepoSettingsFrame.ts"
import type { Web } from "../Web.ts"
import { buttonForm } from "./settings/Frame.ts"

const NOTICES: Readonly<Record<string, string>> = {
  "collaborator-added": "The collaborator has been added.",
  "collaborator-changed": "The collaborator's permission has been changed.",
  "collaborator-removed": "The collaborator has been removed.",
  "key-added": "The deploy key has been added.",
  "key-deleted": "The deploy key has been deleted."
}

const ALL = { page: 1, limit: 100, offset: 0 }
const MODES = COLLABORATOR_MODES.map((m) => [m, m === "read" ? "Read" : m === "write" ? "Write" : "Admin"] as const)
const date = (d: Date) => d.toISOString().slice(0, 10)

type Typed = Readonly<Record<string, string>>

export const RepoSettingsAccessPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { repos } = frame
    const users = yield* UsersRepo
    const keys = yield* KeysService
    const addCollaborator = yield* makeAddCollaborator
    const settings = makeRepoSettingsFrame(web, frame)

    const done = (view: RepoView, page: string, what: string) =>
      web.redirect(view.ctx, `${view.base}/settings/${page}?done=${what}`)

    const collaborationPage = (view: RepoView, typed: Typed, errors: FieldErrors) =>
      Effect.gen(function* () {
        const { ctx, base } = view
        const { rows } = yield* repos.listCollaborators(view.repo, ALL)
        const list =
          rows.length === 0
            ? html`<div class="Box-body color-fg-muted">This repository has no collaborators.</div>`
            : html`<ul>${rows.map(
                (c) => html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="collaborator">
  ${icon("person", 24)}
  <a class="ml-3 flex-auto text-bold wb-break-word" href="/${encodeURIComponent(c.user.name)}" data-testid="collaborator-name">${c.user.name}</a>
  <form method="post" action="${base}/settings/collaboration/access_mode" class="d-inline-flex flex-items-center mr-2">
    ${csrfField(ctx)}
    <input type="hidden" name="uid" value="${String(c.user.id)}">
    <label class="sr-only" for="mode-${String(c.user.id)}">Permission of ${c.user.name}</label>
    <select class="form-select select-sm mr-1" id="mode-${String(c.user.id)}" name="mode" data-testid="collaborator-mode">
      ${MODES.map(([value, text]) => html`<option value="${value}"${value === c.mode ? html` selected` : html``}>${text}</option>`)}
    </select>
    <button class="btn btn-sm" type="submit" aria-label="Change the permission of ${c.user.name}">Change</button>
  </form>
  ${buttonForm(ctx, `${base}/settings/collaboration/delete`, { id: String(c.user.id) }, html`${icon("trash")} Remove`, {
    danger: true,
    accessibleName: `Remove ${c.user.name}`
  })}
</li>`
              )}</ul>`
        return yield* settings.page(
          view,
          {
            menu: "collaboration",
            title: "Collaborators",
            ...(Object.keys(errors).length > 0 ? { status: 422 } : {})
          },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}
<section class="Box mb-4" data-testid="collaborators">
  <div class="Box-header"><h2 class="Box-title">Collaborators</h2></div>
  ${list}
  <div class="Box-body border-top">
    <form method="post" action="${base}/settings/collaboration" data-testid="add-collaborator-form">
      ${csrfField(ctx)}
      ${field({ name: "collaborator", label: "User name", value: typed.collaborator ?? "", autocomplete: "off", required: true }, errors)}
      ${select({ name: "mode", label: "Permission", value: typed.mode ?? "write", choices: MODES }, errors)}
      <button class="btn btn-primary" type="submit">${icon("person-add")} Add collaborator</button>
    </form>
  </div>
</section>`
        )
      })

    const keysPage = (view: RepoView, typed: Typed, errors: FieldErrors) =>
      Effect.gen(function* () {
        const { ctx, base } = view
        const { rows } = yield* keys.listDeploy(view.repo, {}, ALL)
        const list =
          rows.length === 0
            ? html`<div class="Box-body color-fg-muted">This repository has no deploy keys.</div>`
            : html`<ul>${rows.map(
                (key) => html`<li class="Box-row d-flex flex-items-center" data-testid="deploy-key">
  ${icon("key", 24)}
  <div class="ml-3 flex-auto min-width-0">
    <strong class="d-block wb-break-word" data-testid="deploy-key-title">${key.name}</strong>
    <code class="f6 color-fg-muted wb-break-all">${key.fingerprint}</code>
    <span class="d-block f6 color-fg-muted">${key.readOnly ? "Read-only" : "Read and write"} · added on ${date(key.createdAt)}</span>
  </div>
  ${buttonForm(ctx, `${base}/settings/keys/delete`, { id: String(key.id) }, html`${icon("trash")} Delete`, {
    danger: true,
    accessibleName: `Delete the deploy key ${key.name}`
  })}
</li>`
              )}</ul>`
        return yield* settings.page(
          view,
          { menu: "keys", title: "Deploy keys", ...(Object.keys(errors).length > 0 ? { status: 422 } : {}) },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}
<section class="Box mb-4" data-testid="deploy-keys">
  <div class="Box-header"><h2 class="Box-title">Deploy keys</h2></div>
  ${list}
  <div class="Box-body border-top">
    <form method="post" action="${base}/settings/keys" data-testid="add-deploy-key-form">
      ${csrfField(ctx)}
      ${field({ name: "title", label: "Title", value: typed.title ?? "", autocomplete: "off", required: true }, errors)}
      ${textArea({ name: "content", label: "Key", value: typed.content ?? "", rows: 5, code: true, required: true, placeholder: "Begins with 'ssh-ed25519', 'ssh-rsa', 'ecdsa-sha2-nistp256' …" }, errors)}
      ${checkbox({ name: "is_writable", label: "Allow write access", checked: typed.is_writable === "on", hint: "A writable key can push to the repository." })}
      <button class="btn btn-primary" type="submit">${icon("plus")} Add deploy key</button>
    </form>
  </div>
</section>`
        )
      })

    /** The user of a form's numeric id field, or undefined. */
    const userOfId = (value: string | null) =>
      /^\d{1,15}$/.test(value ?? "")
        ? Effect.map(users.findById(Number(value)), Option.getOrUndefined)
        : Effect.succeed(undefined)

    return [
      settings.adminRoute("GET", "/:owner/:repo/settings/collaboration", (view) => collaborationPage(view, {}, {})),
      settings.adminRoute("POST", "/:owner/:repo/settings/collaboration", (view, form) =>
        Effect.gen(function* () {
          const typed = { collaborator: (form.get("collaborator") ?? "").trim(), mode: form.get("mode") ?? "write" }
          if (typed.collaborator === "")
            return yield* collaborationPage(view, typed, { collaborator: "Name the user to add." })
          const user = yield* users.findByName(typed.collaborator)
          if (Option.isNone(user))
            return yield* collaborationPage(view, typed, {
              collaborator: `There is no user named ${typed.collaborator}.`
            })
          const added = yield* Effect.result(addCollaborator(view.owner, view.repo, user.value, typed.mode))
          if (added._tag === "Failure") {
            const message = added.failure.message
            return yield* collaborationPage(view, typed, {
              [/^\[Permission\]/.test(message) ? "mode" : "collaborator"]:
                added.failure instanceof Errors.Forbidden
                  ? `${message}: the owner and ${user.value.name} have blocked each other`
                  : message
            })
          }
          return done(view, "collaboration", "collaborator-added")
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/collaboration/access_mode", (view, form) =>
        Effect.gen(function* () {
          const user = yield* userOfId(form.get("uid"))
          const mode = form.get("mode") ?? ""
          const { rows } = yield* repos.listCollaborators(view.repo, ALL)
          if (user === undefined || !rows.some((c) => c.user.id === user.id)) return web.notFound(view.ctx)
          if (!(COLLABORATOR_MODES as ReadonlyArray<string>).includes(mode))
            return web.errorPage(
              view.ctx,
              422,
              "The permission was not changed",
              `[Permission]: must be one of read, write, admin: "${mode}"`
            )
          // The same rules as adding (a block made since then refuses the change too).
          yield* addCollaborator(view.owner, view.repo, user, mode)
          return done(view, "collaboration", "collaborator-changed")
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/collaboration/delete", (view, form) =>
        Effect.gen(function* () {
          const user = yield* userOfId(form.get("id"))
          if (user === undefined) return web.notFound(view.ctx)
          yield* repos.removeCollaborator(view.repo, user)
          return done(view, "collaboration", "collaborator-removed")
        })
      ),
      settings.adminRoute("GET", "/:owner/:repo/settings/keys", (view) => keysPage(view, {}, {})),
      settings.adminRoute("POST", "/:owner/:repo/settings/keys", (view, form) =>
        Effect.gen(function* () {
          const typed = {
            title: (form.get("title") ?? "").trim(),
            content: form.get("content") ?? "",
            is_writable: form.get("is_writable") === "on" ? "on" : ""
          }
          // The API's request schema bounds the title (`BoundedName`); the form is bounded the same.
          if (typed.title.length > NAME_MAX.keyTitle)
            return yield* keysPage(view, typed, { title: `[Title]: MaxSize (${NAME_MAX.keyTitle})` })
          const created = yield* Effect.result(
            keys.createDeploy(view.repo, {
              title: typed.title,
              key: typed.content,
              read_only: typed.is_writable !== "on"
            })
          )
          if (created._tag === "Failure") {
            const message = created.failure.message
            return yield* keysPage(view, typed, {
              [/^\[Title\]/.test(message) || message === TITLE_USED || message === DEPLOY_TITLE_USED
                ? "title"
                : "content"]: message === KEY_USED ? `${message}: this key is already a user's key` : message
            })
          }
          return done(view, "keys", "key-added")
        })
      ),
      settings.adminRoute("POST", "/:owner/:repo/settings/keys/delete", (view, form) =>
        Effect.gen(function* () {
          yield* keys.removeDeploy(view.repo, form.get("id") ?? "")
          return done(view, "keys", "key-deleted")
        })
      )
    ]
  })
