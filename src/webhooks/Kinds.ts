// Forgejo's webhook event vocabulary (modules/webhook/{type.go,structs.go}, models/webhook
// webhook.go): the flags a hook stores, the names the API accepts in `events`, the fine event
// types a hook receives (in Forgejo's `EventsArray` order) and the coarse `X-Forgejo-Event` of each.

/** The hook types Forgejo registers (services/webhook/webhook.go). */
export const HOOK_TYPES = [
  "forgejo",
  "gitea",
  "gogs",
  "slack",
  "discord",
  "dingtalk",
  "telegram",
  "msteams",
  "feishu",
  "matrix",
  "wechatwork",
  "packagist",
  "sourcehut_builds"
] as const
export type HookType = (typeof HOOK_TYPES)[number]
export const isHookType = (type: string): type is HookType => (HOOK_TYPES as ReadonlyArray<string>).includes(type)

/** The event flags of a hook (HookEvents). */
export const FLAGS = [
  "create",
  "delete",
  "fork",
  "issues",
  "issue_assign",
  "issue_label",
  "issue_milestone",
  "issue_comment",
  "push",
  "pull_request",
  "pull_request_assign",
  "pull_request_label",
  "pull_request_milestone",
  "pull_request_comment",
  "pull_request_review",
  "pull_request_sync",
  "pull_request_review_request",
  "wiki",
  "repository",
  "release",
  "package",
  "action_run_failure",
  "action_run_recover",
  "action_run_success",
  // Gitea's HookEventStatus (a commit status posted); Forgejo v15 has no such event yet.
  "status"
] as const
export type Flag = (typeof FLAGS)[number]

export interface HookEvents {
  readonly push_only: boolean
  readonly send_everything: boolean
  readonly choose_events: boolean
  readonly events: Partial<Record<Flag, boolean>>
}

const ISSUE_FLAGS: ReadonlyArray<Flag> = ["issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"]
const PULL_FLAGS: ReadonlyArray<Flag> = [
  "pull_request",
  "pull_request_assign",
  "pull_request_label",
  "pull_request_milestone",
  "pull_request_comment",
  "pull_request_review",
  "pull_request_review_request",
  "pull_request_sync"
]

/**
 * The flags an API `events` list sets (routers/api/v1/utils/hook.go): names matched
 * case-insensitively, unknown ones ignored, `issues`/`pull_request` set their whole family,
 * `issues_only`/`pull_request_only` just the one; an empty list means `["push"]`.
 */
export const flagsOf = (names: ReadonlyArray<string> | undefined): Partial<Record<Flag, boolean>> => {
  const list = names === undefined || names.length === 0 ? ["push"] : names.map((n) => n.toLowerCase())
  const out: Partial<Record<Flag, boolean>> = {}
  for (const name of list) {
    if (name === "issues") for (const f of ISSUE_FLAGS) out[f] = true
    else if (name === "pull_request") for (const f of PULL_FLAGS) out[f] = true
    else if (name === "issues_only") out.issues = true
    else if (name === "pull_request_only") out.pull_request = true
    else if ((FLAGS as ReadonlyArray<string>).includes(name) && name !== "issues" && name !== "pull_request")
      out[name as Flag] = true
  }
  return out
}

/** The fine event types, in Forgejo's `EventsArray` order, each with the flag that selects it. */
export const EVENT_TYPES = [
  ["create", "create"],
  ["delete", "delete"],
  ["fork", "fork"],
  ["push", "push"],
  ["issues", "issues"],
  ["issue_assign", "issue_assign"],
  ["issue_label", "issue_label"],
  ["issue_milestone", "issue_milestone"],
  ["issue_comment", "issue_comment"],
  ["pull_request", "pull_request"],
  ["pull_request_assign", "pull_request_assign"],
  ["pull_request_label", "pull_request_label"],
  ["pull_request_milestone", "pull_request_milestone"],
  ["pull_request_comment", "pull_request_comment"],
  ["pull_request_review_approved", "pull_request_review"],
  ["pull_request_review_rejected", "pull_request_review"],
  // Forgejo's quirk: review comments follow the pull_request_comment flag.
  ["pull_request_review_comment", "pull_request_comment"],
  ["pull_request_sync", "pull_request_sync"],
  ["wiki", "wiki"],
  ["repository", "repository"],
  ["release", "release"],
  ["package", "package"],
  ["pull_request_review_request", "pull_request_review_request"],
  ["action_run_failure", "action_run_failure"],
  ["action_run_recover", "action_run_recover"],
  ["action_run_success", "action_run_success"],
  ["status", "status"]
] as const satisfies ReadonlyArray<readonly [string, Flag]>
export type EventType = (typeof EVENT_TYPES)[number][0]

/** Whether a hook with these settings receives the fine event type (Forgejo's `HasEvent` checkers). */
export const receives = (events: HookEvents, type: EventType): boolean => {
  if (events.send_everything) return true
  if (type === "push" && events.push_only) return true
  const flag = EVENT_TYPES.find(([t]) => t === type)?.[1]
  return events.choose_events && flag !== undefined && events.events[flag] === true
}

/** The hook's `events` as the API answers them. */
export const eventsArray = (events: HookEvents): Array<string> =>
  events.push_only && !events.send_everything
    ? ["push"]
    : EVENT_TYPES.filter(([type]) => receives(events, type)).map(([type]) => type)

/** The coarse `X-Forgejo-Event` of a fine type (modules/webhook/type.go `Event()`). */
export const coarseEvent = (type: string): string => {
  if (["issues", "issue_assign", "issue_label", "issue_milestone"].includes(type)) return "issues"
  if (
    [
      "pull_request",
      "pull_request_assign",
      "pull_request_label",
      "pull_request_milestone",
      "pull_request_sync",
      "pull_request_review_request"
    ].includes(type)
  )
    return "pull_request"
  if (type === "issue_comment" || type === "pull_request_comment") return "issue_comment"
  if (type === "pull_request_review_approved") return "pull_request_approved"
  if (type === "pull_request_review_rejected") return "pull_request_rejected"
  if (type === "pull_request_review_comment") return "pull_request_comment"
  // Forgejo sends an empty X-Forgejo-Event for `package` (a quirk, CONTRACT-WEBHOOKS §1.8): a
  // receiver routing on that header would drop it, so Hearth names it.
  return type
}
