// Who may manage which hooks (Forgejo's api.go gates: repository admins, organization owners, the
// user's own, site admins), and what a hook may be (routers/api/v1/utils/hook.go
// `checkCreateHookOption`, `addHook`, `editHook`, in Forgejo's order and words). Unlike Forgejo,
// every type works when created through the API: its per-type settings come from `config`.
import { Effect } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { compileGlob } from "../lib/Glob.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import type { CreateHookOption, EditHookOption } from "./Api.ts"
import { type Flag, flagsOf, type HookEvents, isHookType } from "./Kinds.ts"
import type { HookLevel, HookRow, NewHook } from "./Repo.ts"

export type CreateInput = CreateHookOption
export type EditInput = EditHookOption

/** 403 while [security] DISABLE_WEBHOOKS (Forgejo's `reqWebhooksEnabled`; not on /admin/hooks). */
export const webhooksEnabled = Effect.gen(function* () {
  const settings = yield* Settings
  if (settings.security.DISABLE_WEBHOOKS) return yield* Errors.forbidden("webhooks disabled by administrator")
})

/** The hooks of an organization, for its owners (and site admins); 404 for an unknown organization. */
export const makeOrgLevel = Effect.gen(function* () {
  const orgs = yield* OrgsService
  const policy = yield* OrgPolicy
  return (caller: Principal, name: string) =>
    Effect.gen(function* () {
      const org = yield* orgs.get(name)
      yield* policy.ensureOwner(caller, org)
      yield* webhooksEnabled
      return { kind: "owner", ownerId: org.id } as HookLevel
    })
})

const GO_TRUE = ["1", "t", "T", "TRUE", "true", "True"]
const GO_FALSE = ["0", "f", "F", "FALSE", "false", "False"]
const goBool = (value: string) => (GO_TRUE.includes(value) ? true : GO_FALSE.includes(value) ? false : undefined)

const SLACK_CHANNEL = /^#?[a-z0-9_-]{1,80}$/

const validUrl = (raw: string) => {
  if (!URL.canParse(raw)) return false
  const url = new URL(raw)
  return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== ""
}

const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))

const CONTENT_TYPES: Record<string, number> = { json: 1, form: 2 }

/** Per-type settings from `config` (Forgejo's web form fields), and the authorization they imply. */
const metadataOf = (type: string, config: Record<string, string>) =>
  Effect.gen(function* () {
    const get = (key: string) => config[key] ?? ""
    switch (type) {
      case "slack": {
        if (!("channel" in config)) return yield* invalid("Missing config option: channel")
        const channel = get("channel").trim()
        if (!SLACK_CHANNEL.test(channel)) return yield* Effect.fail(Errors.badRequest("Invalid slack channel name"))
        return { meta: { channel, username: get("username"), icon_url: get("icon_url"), color: get("color") } }
      }
      case "discord": {
        if ([...get("username")].length > 80) return yield* invalid("Invalid username: at most 80 characters")
        if (get("icon_url") !== "" && (!validUrl(get("icon_url")) || get("icon_url").length > 2048))
          return yield* invalid("Invalid icon_url")
        return { meta: { username: get("username"), icon_url: get("icon_url") } }
      }
      case "telegram":
        return { meta: { chat_id: get("chat_id"), thread_id: get("thread_id") } }
      case "matrix": {
        const messageType = get("message_type") === "" ? "1" : get("message_type")
        if (!["1", "2"].includes(messageType)) return yield* invalid("Invalid message_type: 1 (m.notice) or 2 (m.text)")
        return {
          meta: { homeserver_url: get("homeserver_url"), room_id: get("room_id"), message_type: Number(messageType) },
          authorization: get("access_token") === "" ? undefined : `Bearer ${get("access_token")}`
        }
      }
      case "packagist": {
        if (get("package_url") === "") return yield* invalid("Missing config option: package_url")
        if (!validUrl(get("package_url"))) return yield* invalid("Invalid package_url")
        return { meta: { username: get("username"), package_url: get("package_url") } }
      }
      case "sourcehut_builds": {
        const path = get("manifest_path")
        if (path === "") return yield* invalid("Missing config option: manifest_path")
        if (path.startsWith("/") || path.split("/").some((part) => part === ".." || part === "."))
          return yield* invalid("Invalid manifest_path")
        const visibility = get("visibility") === "" ? "PUBLIC" : get("visibility")
        if (!["PUBLIC", "UNLISTED", "PRIVATE"].includes(visibility))
          return yield* invalid("Invalid visibility: PUBLIC, UNLISTED or PRIVATE")
        return {
          meta: { manifest_path: path, visibility, secrets: goBool(get("secrets")) === true },
          authorization: get("access_token") === "" ? undefined : `Bearer ${get("access_token")}`
        }
      }
      default:
        return { meta: null }
    }
  })

const checkBranchFilter = (filter: string | undefined) => {
  if (filter === undefined || filter === "") return Effect.void
  return compileGlob(filter) === undefined
    ? invalid(`[BranchFilter]: "${filter}" is not a valid glob pattern`)
    : Effect.void
}

const checkAuthorization = (header: string) =>
  /[\r\n\0]/.test(header) ? invalid("Invalid authorization_header: it must be one line") : Effect.void

/**
 * A new hook from CreateHookOption, checked in Forgejo's order. `events`, from the web settings
 * form, replaces the API's event list (Forgejo's web form stores push_only, send_everything or
 * choose_events as chosen; the API always choose_events).
 */
export const validateCreate = (level: HookLevel, input: CreateInput, events?: HookEvents) =>
  Effect.gen(function* () {
    if (input.type === "") return yield* invalid("[Type]: Required")
    yield* checkBranchFilter(input.branch_filter)
    if (!isHookType(input.type)) return yield* invalid(`Invalid hook type: ${input.type}`)
    const config = input.config
    if (!("url" in config)) return yield* invalid("Missing config option: url")
    if (!("content_type" in config)) return yield* invalid("Missing config option: content_type")
    const contentType = CONTENT_TYPES[config.content_type!]
    if (contentType === undefined) return yield* invalid("Invalid content type")
    if (!validUrl(config.url!)) return yield* invalid("Invalid url")
    let isSystem = false
    if ("is_system_webhook" in config) {
      const parsed = goBool(config.is_system_webhook!)
      if (parsed === undefined) return yield* invalid("Invalid is_system_webhook value")
      isSystem = parsed
    }
    const { meta, authorization } = yield* metadataOf(input.type, config)
    const header = input.authorization_header ?? authorization ?? ""
    yield* checkAuthorization(header)
    events ??= {
      push_only: false,
      send_everything: false,
      choose_events: true,
      events: flagsOf(input.events)
    }
    return {
      repoId: level.kind === "repo" ? level.repoId : null,
      ownerId: level.kind === "owner" ? level.ownerId : null,
      isSystem: level.kind === "admin" && isSystem,
      type: input.type,
      url: config.url!,
      httpMethod: "POST",
      contentType,
      secret: config.secret ?? "",
      authorizationHeader: header,
      events,
      branchFilter: input.branch_filter ?? "",
      meta,
      active: input.active ?? false
    } satisfies NewHook
  })

// Forgejo keeps these flags whatever an edit's `events` says.
const KEPT_ON_EDIT: ReadonlyArray<Flag> = ["package", "action_run_failure", "action_run_recover", "action_run_success"]

/**
 * An edited hook from EditHookOption, as Forgejo's `editHook` (its quirks noted in CONTRACT-WEBHOOKS
 * §1.4); `events` from the web settings form replaces them all, as Forgejo's web form does.
 */
export const validateEdit = (hook: HookRow, input: EditInput, events?: HookEvents) =>
  Effect.gen(function* () {
    let url = hook.url
    let contentType = hook.contentType
    let meta = hook.meta
    let header = input.authorization_header ?? ""
    const config = input.config ?? {}
    if ("url" in config) {
      if (!validUrl(config.url!)) return yield* invalid("Invalid url")
      url = config.url!
    }
    if ("content_type" in config) {
      const type = CONTENT_TYPES[config.content_type!]
      if (type === undefined) return yield* invalid("Invalid content type")
      contentType = type
    }
    if (hook.type === "slack") {
      if ("channel" in config)
        meta = {
          channel: config.channel ?? "",
          username: config.username ?? "",
          icon_url: config.icon_url ?? "",
          color: config.color ?? ""
        }
    } else if (Object.keys(config).some((key) => key !== "url" && key !== "content_type" && key !== "secret")) {
      // Hearth: the per-type settings can be changed too (the stored ones stand for absent keys).
      const merged = {
        ...Object.fromEntries(Object.entries(hook.meta ?? {}).map(([k, v]) => [k, String(v)])),
        ...config
      }
      const rebuilt = yield* metadataOf(hook.type, merged)
      meta = rebuilt.meta
      if (input.authorization_header === undefined && rebuilt.authorization !== undefined)
        header = rebuilt.authorization
    }
    yield* checkBranchFilter(input.branch_filter)
    yield* checkAuthorization(header)
    const flags = flagsOf(input.events)
    for (const flag of KEPT_ON_EDIT) {
      if (hook.events.events[flag] === true) flags[flag] = true
      else delete flags[flag]
    }
    return {
      url,
      httpMethod: hook.httpMethod,
      contentType,
      authorizationHeader: header,
      events: events ?? { push_only: false, send_everything: false, choose_events: true, events: flags },
      branchFilter: input.branch_filter ?? "",
      meta,
      active: input.active === undefined || input.active === null ? hook.active : input.active
    }
  })
