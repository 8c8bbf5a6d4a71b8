// Webhook settings pages (Forgejo's routers/web/repo/setting/webhook.go and templates/repo/settings/
// webhook/*.tmpl), one module for every level that has them: a repository's
// (`/{owner}/{repo}/settings/hooks`, its administrators), an organization's
// (`/org/{org}/settings/hooks`, its owners) and a user's own (`/user/settings/hooks`).
// - `…/hooks`: the hooks with their last delivery's outcome, and a menu of the types to add;
// - `…/hooks/{type}/new`: the form of a type — the fields Forgejo's form has for it (payload URL,
//   content type and secret for forgejo/gitea/gogs; the channel of slack; the bot token and chat of
//   telegram, the homeserver and room of matrix, …), the branch filter, the authorization header,
//   the events (push only, everything, or the ones chosen) and whether it is active;
// - `…/hooks/{id}`: the same form filled in (secret, tokens and authorization header are never
//   shown: left empty they are kept), then the delivery history, newest first, [webhook] PAGING_NUM
//   a page: each delivery's request (URL, method, headers with the authorization redacted, body),
//   its response (status, headers, body), its duration, a "Redeliver" button; "Test delivery" for a
//   repository's hook; delete after a second click.
// Every change goes through WebhooksService (its rules and words, shown next to the field they
// concern, what was typed kept); with [security] DISABLE_WEBHOOKS the pages are a 403 page.
import { Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import * as Errors from "../../http/Errors.ts"
import { OrgPolicy } from "../../orgs/Policy.ts"
import { OrgsService } from "../../orgs/Service.ts"
import type { UserRow } from "../../users/Repo.ts"
import { FLAGS, type Flag, HOOK_TYPES, type HookEvents, type HookType, isHookType } from "../../webhooks/Kinds.ts"
import type { HookLevel, HookRow, TaskRow } from "../../webhooks/Repo.ts"
import { type HookForm, WebhooksService } from "../../webhooks/Service.ts"
import { checkbox, type FieldErrors, field, formError, formNotice, radios, select } from "../Form.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { makeRepoSettingsFrame } from "../RepoSettingsFrame.ts"
import type { Form, Web, WebContext } from "../Web.ts"
import { SIGNED_IN, settingsPage } from "./settings/Frame.ts"

/** Where hooks are managed: the level, the URL of its hook list, and its page frame. */
export interface HookScope {
  readonly ctx: WebContext
  readonly level: HookLevel
  /** The hook list's URL (`/{owner}/{repo}/settings/hooks`), encoded. */
  readonly base: string
  /** A page of the level's settings: its frame around `content`. */
  readonly page: (
    title: string,
    content: Html,
    status?: number
  ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
  /** Queues a test delivery (a repository's hooks only: a push of its default branch's head). */
  readonly test?: ((id: string) => Effect.Effect<void, Errors.NotFound | Errors.Conflict>) | undefined
}

type Typed = Readonly<Record<string, string>>

const NOTICES: Readonly<Record<string, string>> = {
  added: "The webhook has been added.",
  updated: "The webhook has been updated.",
  deleted: "The webhook has been deleted.",
  redelivered: "The delivery has been queued again.",
  tested: "A test delivery (a push of the default branch's last commit) has been queued."
}

const TYPE_NAMES: Readonly<Record<HookType, string>> = {
  forgejo: "Forgejo",
  gitea: "Gitea",
  gogs: "Gogs",
  slack: "Slack",
  discord: "Discord",
  dingtalk: "DingTalk",
  telegram: "Telegram",
  msteams: "Microsoft Teams",
  feishu: "Feishu",
  matrix: "Matrix",
  wechatwork: "WeCom (WeChat Work)",
  packagist: "Packagist",
  sourcehut_builds: "SourceHut Builds"
}

/** A type-specific field: its form name, label, whether required, and how it is shown. */
interface TypeField {
  readonly name: string
  readonly label: string
  readonly required?: boolean
  readonly hint?: string
  /** A secret: never shown; left empty on an existing hook, the stored one is kept. */
  readonly secret?: boolean
  readonly choices?: ReadonlyArray<readonly [string, string]>
  readonly check?: boolean
}

const PAYLOAD_URL: TypeField = { name: "payload_url", label: "Target URL", required: true }
const CONTENT_TYPE: TypeField = {
  name: "content_type",
  label: "Content type",
  choices: [
    ["json", "application/json"],
    ["form", "application/x-www-form-urlencoded"]
  ]
}
const SECRET: TypeField = {
  name: "secret",
  label: "Secret",
  secret: true,
  hint: "Signs each delivery (X-Forgejo-Signature, X-Hub-Signature-256) so that the receiver can check it."
}

/** The fields of each type (Forgejo's per-type forms, CONTRACT-WEBHOOKS §1.6). */
const TYPE_FIELDS: Readonly<Record<HookType, ReadonlyArray<TypeField>>> = {
  forgejo: [PAYLOAD_URL, CONTENT_TYPE, SECRET],
  gitea: [PAYLOAD_URL, CONTENT_TYPE, SECRET],
  gogs: [PAYLOAD_URL, CONTENT_TYPE, SECRET],
  slack: [
    PAYLOAD_URL,
    { name: "channel", label: "Channel", required: true, hint: "#channel, lower-case letters, digits, - and _." },
    { name: "username", label: "Username" },
    { name: "icon_url", label: "Icon URL" },
    { name: "color", label: "Colour" }
  ],
  discord: [PAYLOAD_URL, { name: "username", label: "Username" }, { name: "icon_url", label: "Icon URL" }],
  dingtalk: [PAYLOAD_URL],
  msteams: [PAYLOAD_URL],
  feishu: [PAYLOAD_URL],
  wechatwork: [PAYLOAD_URL],
  telegram: [
    { name: "bot_token", label: "Bot token", required: true, secret: true },
    { name: "chat_id", label: "Chat ID", required: true },
    { name: "thread_id", label: "Thread ID" }
  ],
  matrix: [
    { name: "homeserver_url", label: "Homeserver URL", required: true },
    { name: "room_id", label: "Room ID", required: true, hint: "!room:example.org" },
    {
      name: "message_type",
      label: "Message type",
      choices: [
        ["1", "m.notice"],
        ["2", "m.text"]
      ]
    },
    { name: "access_token", label: "Access token", required: true, secret: true }
  ],
  packagist: [
    { name: "username", label: "Packagist username", required: true },
    { name: "api_token", label: "API token", required: true, secret: true },
    { name: "package_url", label: "Package URL", required: true, hint: "https://packagist.org/packages/vendor/name" }
  ],
  sourcehut_builds: [
    PAYLOAD_URL,
    { name: "manifest_path", label: "Manifest path", required: true, hint: ".builds/build.yml" },
    {
      name: "visibility",
      label: "Visibility",
      choices: [
        ["PUBLIC", "Public"],
        ["UNLISTED", "Unlisted"],
        ["PRIVATE", "Private"]
      ]
    },
    { name: "secrets", label: "Allow the build to use secrets", check: true },
    { name: "access_token", label: "Access token", required: true, secret: true }
  ]
}

/** Types whose authorization header the form asks for (the others derive it from a token, or send none). */
const hasAuthorizationField = (type: HookType) =>
  !["matrix", "sourcehut_builds", "packagist", "telegram"].includes(type)

/** The event checkboxes, grouped as Forgejo's form groups them. */
const EVENT_GROUPS: ReadonlyArray<readonly [string, ReadonlyArray<readonly [Flag, string]>]> = [
  [
    "Repository",
    [
      ["create", "Create: a branch or tag is created"],
      ["delete", "Delete: a branch or tag is deleted"],
      ["fork", "Fork: the repository is forked"],
      ["push", "Push: commits are pushed"],
      ["repository", "Repository: created or deleted"],
      ["release", "Release: published, updated or deleted"],
      ["wiki", "Wiki: a page is created, edited or deleted"],
      ["package", "Package: published or deleted"]
    ]
  ],
  [
    "Issues",
    [
      ["issues", "Issues: opened, closed, reopened or edited"],
      ["issue_assign", "Issue assigned"],
      ["issue_label", "Issue labelled"],
      ["issue_milestone", "Issue milestoned"],
      ["issue_comment", "Issue comment: created, edited or deleted"]
    ]
  ],
  [
    "Pull requests",
    [
      ["pull_request", "Pull request: opened, closed, reopened or edited"],
      ["pull_request_assign", "Pull request assigned"],
      ["pull_request_label", "Pull request labelled"],
      ["pull_request_milestone", "Pull request milestoned"],
      ["pull_request_comment", "Pull request comment"],
      ["pull_request_review", "Pull request reviewed"],
      ["pull_request_sync", "Pull request synchronized: its branch is updated"],
      ["pull_request_review_request", "Review requested"]
    ]
  ],
  [
    "Actions",
    [
      ["action_run_failure", "Run failed"],
      ["action_run_recover", "Run recovered"],
      ["action_run_success", "Run succeeded"]
    ]
  ]
]

const modeOf = (events: HookEvents) =>
  events.send_everything ? "send_everything" : events.push_only ? "push_only" : "choose_events"

const date = (d: Date) => `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`

/** The stored per-type values of a hook, as its form shows them. */
const metaString = (hook: HookRow, key: string) => {
  const value = hook.meta?.[key]
  return value === undefined || value === null ? "" : String(value)
}

/** Which field of the form a service refusal concerns. */
const FIELD_OF: ReadonlyArray<readonly [RegExp, string]> = [
  [/^\[BranchFilter\]/, "branch_filter"],
  [/authorization_header/, "authorization_header"],
  [/content type/, "content_type"],
  [/channel/, "channel"],
  [/username/, "username"],
  [/icon_url/, "icon_url"],
  [/message_type/, "message_type"],
  [/package_url/, "package_url"],
  [/manifest_path/, "manifest_path"],
  [/visibility/, "visibility"],
  [/url$/, "payload_url"]
]

/** The URL a type's fields make (Forgejo builds telegram, matrix and packagist URLs from them). */
const urlOf = (type: HookType, get: (name: string) => string) => {
  switch (type) {
    case "telegram": {
      const thread = get("thread_id")
      return `https://api.telegram.org/bot${get("bot_token")}/sendMessage?chat_id=${encodeURIComponent(get("chat_id"))}${
        thread === "" ? "" : `&message_thread_id=${encodeURIComponent(thread)}`
      }`
    }
    case "matrix":
      return `${get("homeserver_url").replace(/\/+$/, "")}/_matrix/client/v3/rooms/${encodeURIComponent(get("room_id"))}/send/m.room.message`
    case "packagist":
      return `https://packagist.org/api/update-package?username=${encodeURIComponent(get("username"))}&apiToken=${encodeURIComponent(get("api_token"))}`
    default:
      return get("payload_url")
  }
}

/** The secret tokens an existing hook keeps in its URL (telegram's bot token, packagist's API token). */
const tokenInUrl = (hook: HookRow, name: string) => {
  if (name === "bot_token") return /\/bot([^/]+)\/sendMessage/.exec(hook.url)?.[1]
  if (name === "api_token") {
    try {
      return new URL(hook.url).searchParams.get("apiToken") ?? undefined
    } catch {
      return undefined
    }
  }
  return undefined
}

/** A hook or request URL as the pages show it: the tokens telegram and packagist URLs carry masked. */
const shownUrl = (url: string) =>
  url.replace(/\/bot[^/]+\/sendMessage/, "/bot******/sendMessage").replace(/([?&]apiToken=)[^&]*/, "$1******")

export const makeHookPages = (web: Web) =>
  Effect.gen(function* () {
    const hooks = yield* WebhooksService
    const pagingNum = web.settings.webhook.PAGING_NUM

    const disabled = (ctx: WebContext) =>
      web.errorPage(
        ctx,
        403,
        "Webhooks are disabled",
        "The administrator has turned webhooks off ([security] DISABLE_WEBHOOKS)."
      )

    const status = (hook: HookRow) =>
      hook.lastStatus === 1
        ? html`<span class="color-fg-success" data-testid="hook-status">${icon("check-circle")} Last delivery succeeded</span>`
        : hook.lastStatus === 2
          ? html`<span class="color-fg-danger" data-testid="hook-status">${icon("x-circle")} Last delivery failed</span>`
          : html`<span class="color-fg-muted" data-testid="hook-status">${icon("dot-fill")} Not delivered yet</span>`

    const confirmDelete = (scope: HookScope, hook: HookRow) =>
      html`<details class="details-reset d-inline-block" data-testid="delete-hook">
  <summary class="btn btn-danger">${icon("trash")} Delete this webhook</summary>
  <div class="Box p-3 mt-2">
    <p class="mb-2">Delete the webhook to ${shownUrl(hook.url)}? Its delivery history goes with it. This cannot be undone.</p>
    <form method="post" action="${scope.base}/${String(hook.id)}/delete">
      ${csrfField(scope.ctx)}
      <button class="btn btn-sm btn-danger" type="submit">Delete the webhook</button>
    </form>
  </div>
</details>`

    const listPage = (scope: HookScope) =>
      Effect.gen(function* () {
        const { rows } = yield* hooks.list(scope.level, undefined)
        const types = html`<details class="details-reset details-overlay d-inline-block" data-testid="add-hook">
  <summary class="btn btn-sm btn-primary">${icon("plus")} Add webhook</summary>
  <div class="SelectMenu-modal position-absolute mt-1 color-bg-default border rounded-2 color-shadow-medium hearth-hook-types">
    <ul class="list-style-none py-1">${HOOK_TYPES.map(
      (type) => html`<li><a class="d-block px-3 py-1" href="${scope.base}/${type}/new">${TYPE_NAMES[type]}</a></li>`
    )}</ul>
  </div>
</details>`
        const list =
          rows.length === 0
            ? html`<div class="Box-body color-fg-muted">There are no webhooks. A webhook sends an HTTP request to another service when something happens here.</div>`
            : html`<ul>${rows.map(
                (hook) => html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="hook">
  <div class="flex-auto min-width-0 mr-2">
    <a class="text-bold wb-break-all" href="${scope.base}/${String(hook.id)}" data-testid="hook-url">${shownUrl(hook.url)}</a>
    <div class="f6 mt-1"><span class="Label mr-1">${TYPE_NAMES[hook.type as HookType] ?? hook.type}</span>${
      hook.active ? empty : html`<span class="Label Label--attention mr-1">Inactive</span>`
    }${status(hook)}</div>
  </div>
  <a class="btn btn-sm" href="${scope.base}/${String(hook.id)}" aria-label="Edit the webhook to ${shownUrl(hook.url)}">${icon("pencil")} Edit</a>
</li>`
              )}</ul>`
        return yield* scope.page(
          "Webhooks",
          html`${formNotice(NOTICES[scope.ctx.url.searchParams.get("done") ?? ""])}
<section class="Box mb-4" data-testid="hooks">
  <div class="Box-header d-flex flex-items-center">
    <h2 class="Box-title flex-auto">Webhooks</h2>
    ${types}
  </div>
  ${list}
</section>`
        )
      })

    /** The form of a hook of `type` (new when `hook` is undefined). */
    const hookForm = (
      scope: HookScope,
      type: HookType,
      hook: HookRow | undefined,
      typed: Typed | undefined,
      errors: FieldErrors
    ) => {
      const value = (name: string, current: string) => typed?.[name] ?? current
      const checked = (name: string, current: boolean) => (typed === undefined ? current : typed[name] === "on")
      const stored = (name: string) => {
        if (hook === undefined) return ""
        if (name === "payload_url") return hook.url
        if (name === "content_type") return hook.contentType === 2 ? "form" : "json"
        return metaString(hook, name)
      }
      const typeField = (f: TypeField) => {
        if (f.check === true)
          return checkbox({ name: f.name, label: f.label, checked: checked(f.name, stored(f.name) === "true") })
        if (f.choices !== undefined)
          return select(
            {
              name: f.name,
              label: f.label,
              value: value(f.name, stored(f.name) || f.choices[0]![0]),
              choices: f.choices
            },
            errors
          )
        if (f.secret === true)
          return field(
            {
              name: f.name,
              label: f.label,
              type: "password",
              autocomplete: "new-password",
              required: f.required === true && hook === undefined,
              ...(hook === undefined
                ? f.hint === undefined
                  ? {}
                  : { hint: f.hint }
                : {
                    hint: `Not shown. Leave empty to keep the current one.${f.hint === undefined ? "" : ` ${f.hint}`}`
                  })
            },
            errors
          )
        return field(
          {
            name: f.name,
            label: f.label,
            value: value(f.name, stored(f.name)),
            autocomplete: "off",
            required: f.required === true,
            ...(f.hint === undefined ? {} : { hint: f.hint })
          },
          errors
        )
      }
      const mode = value("events", hook === undefined ? "push_only" : modeOf(hook.events))
      const flagChecked = (flag: Flag) =>
        typed === undefined ? hook?.events.events[flag] === true : typed[flag] === "on"
      const hasAuthorization = hook !== undefined && hook.authorizationHeader !== ""
      const action = hook === undefined ? `${scope.base}/${type}/new` : `${scope.base}/${String(hook.id)}`
      return html`<form method="post" action="${action}" data-testid="hook-form">
  ${csrfField(scope.ctx)}
  ${TYPE_FIELDS[type].map(typeField)}
  ${field(
    {
      name: "branch_filter",
      label: "Branch filter",
      value: value("branch_filter", hook?.branchFilter ?? "*"),
      autocomplete: "off",
      hint: "Push, create and delete events of the branches this glob matches: * (or empty) for all, {main,release/*} for some."
    },
    errors
  )}
  ${
    hasAuthorizationField(type)
      ? html`${field(
          {
            name: "authorization_header",
            label: "Authorization header",
            type: "password",
            autocomplete: "new-password",
            hint:
              hook === undefined
                ? "Sent as the Authorization header of each delivery (Bearer …, Basic …); optional."
                : hasAuthorization
                  ? "Not shown. Leave empty to keep the current one."
                  : "Sent as the Authorization header of each delivery (Bearer …, Basic …); optional."
          },
          errors
        )}${
          hasAuthorization
            ? checkbox({
                name: "remove_authorization",
                label: "Remove the authorization header",
                checked: checked("remove_authorization", false)
              })
            : empty
        }`
      : empty
  }
  ${radios({
    name: "events",
    legend: "Which events trigger the webhook",
    value: mode,
    choices: [
      ["push_only", "Push events only"],
      ["send_everything", "All events"],
      ["choose_events", "The events chosen below"]
    ]
  })}
  <div class="mb-3 ml-4" data-testid="hook-events">${EVENT_GROUPS.map(
    ([legend, flags]) =>
      html`<fieldset class="mb-2"><legend class="text-bold mb-1">${legend}</legend>${flags.map(([flag, label]) =>
        checkbox({ name: flag, label, checked: flagChecked(flag) })
      )}</fieldset>`
  )}</div>
  ${checkbox({ name: "active", label: "Active", checked: checked("active", hook?.active ?? true), hint: "An inactive webhook is not sent; its test deliveries are recorded as failed." })}
  <button class="btn btn-primary" type="submit">${hook === undefined ? "Add webhook" : "Update webhook"}</button>
  <a class="btn ml-2" href="${scope.base}">Cancel</a>
</form>`
    }

    const newPage = (
      scope: HookScope,
      type: HookType,
      typed: Typed | undefined,
      errors: FieldErrors,
      message?: string
    ) =>
      scope.page(
        `Add a ${TYPE_NAMES[type]} webhook`,
        html`${formError(message)}<section class="Box mb-4"><div class="Box-body">${hookForm(scope, type, undefined, typed, errors)}</div></section>`,
        message !== undefined || Object.keys(errors).length > 0 ? 422 : 200
      )

    const delivery = (scope: HookScope, hook: HookRow, task: TaskRow) => {
      const state = !task.isDelivered
        ? html`<span class="color-fg-muted">${icon("clock")} Queued</span>`
        : task.isSucceed
          ? html`<span class="color-fg-success">${icon("check-circle")} Succeeded</span>`
          : html`<span class="color-fg-danger">${icon("x-circle")} Failed</span>`
      const headers = (h: Readonly<Record<string, string>>) =>
        Object.entries(h)
          .map(([k, v]) => `${k}: ${v}`)
          .join("\n")
      return html`<li class="Box-row" data-testid="delivery">
  <details>
    <summary class="d-flex flex-items-center flex-wrap">
      <span class="mr-2">${state}</span>
      <code class="mr-2 f6 wb-break-all" data-testid="delivery-uuid">${task.uuid}</code>
      <span class="Label mr-2">${task.eventType}</span>
      ${task.redeliveryOf === null ? empty : html`<span class="f6 color-fg-muted mr-2">redelivery of #${String(task.redeliveryOf)}</span>`}
      <span class="f6 color-fg-muted ml-auto">${date(task.createdAt)}${task.isDelivered ? html` · ${String(task.durationMs)} ms` : empty}${
        task.attempts > 1 ? html` · ${String(task.attempts)} attempts` : empty
      }</span>
    </summary>
    <div class="mt-3">
      ${
        task.request === null
          ? html`<p class="color-fg-muted">Not sent yet.</p>`
          : html`<h3 class="h5">Request</h3>
      <p class="f6 mb-1"><span class="text-bold">${task.request.http_method}</span> <span class="wb-break-all" data-testid="delivery-request-url">${shownUrl(task.request.url)}</span></p>
      <pre tabindex="0" class="hearth-hook-pre f6 p-2 mb-2 color-bg-subtle rounded-2" data-testid="delivery-request-headers">${headers(task.request.headers)}</pre>
      <pre tabindex="0" class="hearth-hook-pre f6 p-2 mb-3 color-bg-subtle rounded-2" data-testid="delivery-request-body">${task.request.body}</pre>`
      }
      ${
        task.response === null
          ? empty
          : html`<h3 class="h5">Response <span class="Label" data-testid="delivery-response-status">${task.response.status === 0 ? "no answer" : String(task.response.status)}</span></h3>
      <pre tabindex="0" class="hearth-hook-pre f6 p-2 mb-2 color-bg-subtle rounded-2" data-testid="delivery-response-headers">${headers(task.response.headers)}</pre>
      <pre tabindex="0" class="hearth-hook-pre f6 p-2 mb-3 color-bg-subtle rounded-2" data-testid="delivery-response-body">${task.response.body}</pre>`
      }
      <form method="post" action="${scope.base}/${String(hook.id)}/replay/${String(task.id)}">
        ${csrfField(scope.ctx)}
        <button class="btn btn-sm" type="submit" aria-label="Redeliver ${task.uuid}">${icon("sync")} Redeliver</button>
      </form>
    </div>
  </details>
</li>`
    }

    const hookPage = (
      scope: HookScope,
      hook: HookRow,
      typed: Typed | undefined,
      errors: FieldErrors,
      message?: string,
      answer?: number
    ) =>
      Effect.gen(function* () {
        const type = hook.type as HookType
        const requested = Number(scope.ctx.url.searchParams.get("page") ?? "1")
        const pageNo = Number.isInteger(requested) && requested >= 1 && requested <= 100_000 ? requested : 1
        const { rows, total } = yield* hooks.deliveries(scope.level, String(hook.id), {
          page: pageNo,
          limit: pagingNum,
          offset: (pageNo - 1) * pagingNum
        })
        const pages = Math.max(1, Math.ceil(total / pagingNum))
        const pager =
          pages <= 1
            ? empty
            : html`<nav class="paginate-container" aria-label="Deliveries"><div class="pagination">${
                pageNo > 1
                  ? html`<a class="previous_page" rel="prev" href="${scope.base}/${String(hook.id)}?page=${String(pageNo - 1)}">Newer</a>`
                  : html`<span class="previous_page" aria-disabled="true">Newer</span>`
              }${
                pageNo < pages
                  ? html`<a class="next_page" rel="next" href="${scope.base}/${String(hook.id)}?page=${String(pageNo + 1)}">Older</a>`
                  : html`<span class="next_page" aria-disabled="true">Older</span>`
              }</div></nav>`
        const test =
          scope.test === undefined
            ? empty
            : html`<form method="post" action="${scope.base}/${String(hook.id)}/test" class="d-inline">
    ${csrfField(scope.ctx)}
    <button class="btn btn-sm" type="submit">${icon("play")} Test delivery</button>
  </form>`
        return yield* scope.page(
          `${TYPE_NAMES[type] ?? hook.type} webhook`,
          html`${formNotice(NOTICES[scope.ctx.url.searchParams.get("done") ?? ""])}${formError(message)}
<section class="Box mb-4"><div class="Box-body">${hookForm(scope, type, hook, typed, errors)}</div></section>
<section class="Box mb-4" data-testid="deliveries">
  <div class="Box-header d-flex flex-items-center">
    <h2 class="Box-title flex-auto">Recent deliveries</h2>
    ${test}
  </div>
  ${
    rows.length === 0
      ? html`<div class="Box-body color-fg-muted">Nothing has been delivered yet.</div>`
      : html`<ul>${rows.map((task) => delivery(scope, hook, task))}</ul>`
  }
</section>
${pager}
<div class="mt-4">${confirmDelete(scope, hook)}</div>`,
          answer ?? (message !== undefined || Object.keys(errors).length > 0 ? 422 : 200)
        )
      })

    /** The service's inputs from the form: the API's options, and what only the web form sets. */
    const inputsOf = (type: HookType, form: Form, hook: HookRow | undefined) => {
      const get = (name: string) => (form.get(name) ?? "").trim()
      const errors: Record<string, string> = {}
      const fields = TYPE_FIELDS[type]
      // A secret left empty on an existing hook is kept: its stored value stands in for it.
      const kept = (name: string) =>
        hook === undefined || get(name) !== "" ? get(name) : (tokenInUrl(hook, name) ?? "")
      for (const f of fields) {
        const keepable = hook !== undefined && f.secret === true
        if (f.required === true && get(f.name) === "" && !keepable)
          errors[f.name] = `Enter the ${f.label.toLowerCase()}.`
      }
      const config: Record<string, string> = {
        url: urlOf(type, kept),
        content_type: fields.includes(CONTENT_TYPE) ? get("content_type") : "json"
      }
      for (const f of fields) {
        if (f === PAYLOAD_URL || f === CONTENT_TYPE || f === SECRET) continue
        if (f.check === true) config[f.name] = form.get(f.name) === "on" ? "true" : "false"
        else if (!(f.secret === true && get(f.name) === "")) config[f.name] = get(f.name)
      }
      if (hook === undefined && fields.includes(SECRET)) config.secret = form.get("secret") ?? ""
      const mode = form.get("events")
      const flags: Partial<Record<Flag, boolean>> = {}
      for (const flag of FLAGS) if (form.get(flag) === "on") flags[flag] = true
      const events: HookEvents = {
        push_only: mode === "push_only" || (mode !== "send_everything" && mode !== "choose_events"),
        send_everything: mode === "send_everything",
        choose_events: mode === "choose_events",
        events: flags
      }
      const authorization = (form.get("authorization_header") ?? "").trim()
      const remove = form.get("remove_authorization") === "on"
      const webForm: HookForm = {
        events,
        ...(hook !== undefined && fields.includes(SECRET) && (form.get("secret") ?? "") !== ""
          ? { secret: form.get("secret") ?? "" }
          : {}),
        // An authorization header (or the token it is made of) left empty is kept.
        keepAuthorization:
          hook !== undefined &&
          (hasAuthorizationField(type) ? !remove && authorization === "" : get("access_token") === "")
      }
      return {
        errors,
        config,
        authorization: hasAuthorizationField(type) && authorization !== "" ? authorization : undefined,
        branchFilter: get("branch_filter"),
        active: form.get("active") === "on",
        webForm
      }
    }

    /** A service refusal next to its field (or for the whole form). */
    const refusal = (type: HookType, failure: { readonly message: string }): [FieldErrors, string?] => {
      const message = failure.message
      const found = FIELD_OF.find(([re]) => re.test(message))?.[1]
      const names = new Set([
        ...TYPE_FIELDS[type].map((f) => f.name),
        "branch_filter",
        ...(hasAuthorizationField(type) ? ["authorization_header"] : [])
      ])
      if (found !== undefined && names.has(found)) return [{ [found]: message }]
      // Matrix's URL is made of its homeserver.
      if (found === "payload_url" && type === "matrix") return [{ homeserver_url: message }]
      return [{}, message]
    }

    const typedOf = (form: Form): Typed =>
      Object.fromEntries(
        [...form].filter(
          ([k]) =>
            k !== "_csrf" && !["secret", "authorization_header", "bot_token", "access_token", "api_token"].includes(k)
        )
      )

    const guard = <A>(scope: HookScope, effect: Effect.Effect<A, unknown>) =>
      web.settings.security.DISABLE_WEBHOOKS ? Effect.succeed(disabled(scope.ctx)) : effect

    const typeOf = (value: string | undefined) => (value !== undefined && isHookType(value) ? value : undefined)

    /** The handlers of one level, each given the scope of its request and the rest of the path. */
    return {
      list: (scope: HookScope) => guard(scope, listPage(scope)),
      newForm: (scope: HookScope, type: string | undefined) => {
        const known = typeOf(type)
        return guard(
          scope,
          known === undefined ? Effect.succeed(web.notFound(scope.ctx)) : newPage(scope, known, undefined, {})
        )
      },
      create: (scope: HookScope, type: string | undefined, form: Form) =>
        guard(
          scope,
          Effect.gen(function* () {
            const known = typeOf(type)
            if (known === undefined) return web.notFound(scope.ctx)
            const typed = typedOf(form)
            const input = inputsOf(known, form, undefined)
            if (Object.keys(input.errors).length > 0) return yield* newPage(scope, known, typed, input.errors)
            const created = yield* Effect.result(
              hooks.create(
                scope.level,
                {
                  type: known,
                  config: input.config,
                  branch_filter: input.branchFilter,
                  ...(input.authorization === undefined ? {} : { authorization_header: input.authorization }),
                  active: input.active
                },
                input.webForm
              )
            )
            if (created._tag === "Failure") {
              const [errors, message] = refusal(known, created.failure)
              return yield* newPage(scope, known, typed, errors, message)
            }
            return web.redirect(scope.ctx, `${scope.base}?done=added`)
          })
        ),
      show: (scope: HookScope, id: string) =>
        guard(
          scope,
          Effect.flatMap(hooks.get(scope.level, id), (hook) => hookPage(scope, hook, undefined, {}))
        ),
      update: (scope: HookScope, id: string, form: Form) =>
        guard(
          scope,
          Effect.gen(function* () {
            const hook = yield* hooks.get(scope.level, id)
            const type = hook.type as HookType
            const typed = typedOf(form)
            const input = inputsOf(type, form, hook)
            if (Object.keys(input.errors).length > 0) return yield* hookPage(scope, hook, typed, input.errors)
            const edited = yield* Effect.result(
              hooks.edit(
                scope.level,
                id,
                {
                  config: input.config,
                  branch_filter: input.branchFilter,
                  ...(input.authorization === undefined ? {} : { authorization_header: input.authorization }),
                  active: input.active
                },
                input.webForm
              )
            )
            if (edited._tag === "Failure") {
              if (edited.failure instanceof Errors.NotFound) return web.notFound(scope.ctx)
              const [errors, message] = refusal(type, edited.failure)
              return yield* hookPage(scope, hook, typed, errors, message)
            }
            return web.redirect(scope.ctx, `${scope.base}/${String(hook.id)}?done=updated`)
          })
        ),
      remove: (scope: HookScope, id: string) =>
        guard(scope, Effect.as(hooks.remove(scope.level, id), web.redirect(scope.ctx, `${scope.base}?done=deleted`))),
      replay: (scope: HookScope, id: string, deliveryId: string) =>
        guard(
          scope,
          Effect.as(
            hooks.redeliver(scope.level, id, deliveryId),
            web.redirect(scope.ctx, `${scope.base}/${encodeURIComponent(id)}?done=redelivered`)
          )
        ),
      test: (scope: HookScope, id: string) =>
        guard(
          scope,
          Effect.gen(function* () {
            if (scope.test === undefined) return web.notFound(scope.ctx)
            const hook = yield* hooks.get(scope.level, id)
            const sent = yield* Effect.result(scope.test(id))
            if (sent._tag === "Failure") {
              if (sent.failure instanceof Errors.NotFound) return web.notFound(scope.ctx)
              return yield* hookPage(scope, hook, undefined, {}, sent.failure.message, 409)
            }
            return web.redirect(scope.ctx, `${scope.base}/${String(hook.id)}?done=tested`)
          })
        )
    }
  })

export type HookPages = Effect.Success<ReturnType<typeof makeHookPages>>

/** The request of a hook page: `after` is the path after the hook list's URL, decoded. */
const dispatch = (
  web: Web,
  pages: HookPages,
  scope: HookScope,
  method: "GET" | "POST",
  after: ReadonlyArray<string>,
  form: Form
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
  const [a, b, c] = after
  if (method === "GET") {
    if (a === undefined) return pages.list(scope)
    if (after.length === 2 && b === "new") return pages.newForm(scope, a)
    if (after.length === 1) return pages.show(scope, a)
  } else if (a !== undefined) {
    if (after.length === 2 && b === "new") return pages.create(scope, a, form)
    if (after.length === 1) return pages.update(scope, a, form)
    if (after.length === 2 && b === "delete") return pages.remove(scope, a)
    if (after.length === 2 && b === "test") return pages.test(scope, a)
    if (after.length === 3 && b === "replay" && c !== undefined) return pages.replay(scope, a, c)
  }
  return Effect.succeed(web.notFound(scope.ctx))
}

/** `prefix`, then up to three segments, for both methods. */
const patterns = (prefix: string) =>
  ["", "/:a", "/:a/:b", "/:a/:b/:c"].flatMap((tail) =>
    (["GET", "POST"] as const).map((method) => [method, `${prefix}${tail}`] as const)
  )

/** The path segments of a request after the first `skip` ones, decoded (undefined: malformed). */
const segmentsAfter = (ctx: WebContext, skip: number) => {
  try {
    return ctx.url.pathname
      .split("/")
      .slice(1 + skip)
      .map(decodeURIComponent)
      .filter((s, i, all) => s !== "" || i < all.length - 1)
  } catch {
    return undefined
  }
}

/** The hook pages of every level: repositories, organizations, the signed-in user. */
export const HookSettingsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const pages = yield* makeHookPages(web)
    const hooks = yield* WebhooksService
    const orgs = yield* OrgsService
    const orgPolicy = yield* OrgPolicy
    const settings = makeRepoSettingsFrame(web, frame)

    const repoScope = (view: RepoView): HookScope => ({
      ctx: view.ctx,
      level: { kind: "repo", repoId: view.repo.id },
      base: `${view.base}/settings/hooks`,
      page: (title, content, status) =>
        settings.page(view, { menu: "hooks", title, ...(status === undefined ? {} : { status }) }, content),
      test: (id) => hooks.test(view, view.ctx.viewer!, id, undefined)
    })

    /** An organization's settings frame: a menu with its one entry, Webhooks. */
    const orgPage = (ctx: WebContext, org: UserRow) => (title: string, content: Html, status?: number) =>
      Effect.succeed(
        web.page(
          ctx,
          { title: `${title} · ${org.name}`, ...(status === undefined ? {} : { status }) },
          html`<div class="container-lg p-responsive py-4 d-md-flex">
  <nav class="col-md-3 pr-md-4 mb-4" aria-label="Organization settings">
    <div class="menu">
      <span class="menu-heading">${org.name}</span>
      <a class="menu-item" href="/${encodeURIComponent(org.name)}">${icon("organization")} Profile</a>
      <a class="menu-item" href="/org/${encodeURIComponent(org.name)}/settings/hooks" aria-current="page">${icon("webhook")} Webhooks</a>
    </div>
  </nav>
  <div class="col-md-9" data-testid="org-settings">
    <h1 class="h2 mb-3">${title}</h1>
    ${content}
  </div>
</div>`
        )
      )

    const repoRoutes = patterns("/:owner/:repo/settings/hooks").map(([method, path]) =>
      settings.adminRoute(method, path, (view, form) => {
        const after = view.rest.slice(2).filter((s, i, all) => s !== "" || i < all.length - 1)
        return dispatch(web, pages, repoScope(view), method, after, form)
      })
    )
    const orgRoutes = patterns("/org/:org/settings/hooks").map(([method, path]) =>
      web.route(method, path, { access: "signed-in" }, (ctx, form) =>
        Effect.gen(function* () {
          const after = segmentsAfter(ctx, 4)
          const name = segmentsAfter(ctx, 1)?.[0]
          if (after === undefined || name === undefined) return web.notFound(ctx)
          const org = yield* orgs.get(name)
          const owner = yield* Effect.result(orgPolicy.ensureOwner(ctx.viewer!, org))
          if (owner._tag === "Failure")
            return web.errorPage(ctx, 403, "Forbidden", "Only the organization's owners may manage its webhooks.")
          const scope: HookScope = {
            ctx,
            level: { kind: "owner", ownerId: org.id },
            base: `/org/${encodeURIComponent(org.name)}/settings/hooks`,
            page: orgPage(ctx, org)
          }
          return yield* dispatch(web, pages, scope, method, after, form)
        })
      )
    )
    const userRoutes = patterns("/user/settings/hooks").map(([method, path]) =>
      web.route(method, path, SIGNED_IN, (ctx, form) => {
        const after = segmentsAfter(ctx, 3)
        if (after === undefined) return Effect.succeed(web.notFound(ctx))
        const scope: HookScope = {
          ctx,
          level: { kind: "owner", ownerId: ctx.viewer!.user.id },
          base: "/user/settings/hooks",
          page: (title, content, status) =>
            Effect.succeed(
              settingsPage(
                web,
                ctx,
                { path: "/user/settings/hooks", title, ...(status === undefined ? {} : { status }) },
                content
              )
            )
        }
        return dispatch(web, pages, scope, method, after, form)
      })
    )
    return [...repoRoutes, ...orgRoutes, ...userRoutes]
  })
