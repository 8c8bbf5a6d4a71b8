// Quota rules (Forgejo's models/quota, routers/api/v1/admin/quota*.go): the administration of rules, groups and
// memberships with Forgejo's answers, what an account uses, and the one check every operation
// that grows storage makes (`enforce`), charged to the account that owns what grows.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Settings } from "../config/Settings.ts"
import { transaction as sqlTransaction } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { NAME_MAX } from "../lib/Names.ts"
import type { UserRow } from "../users/Repo.ts"
import {
  evaluateGroups,
  type Group,
  parseSubjects,
  type Rule,
  type Subject,
  type Used,
  unrecognizedSubject,
  verdictWithoutUsage
} from "./Evaluate.ts"
import { type QuotaAttachmentRow, QuotaRepo } from "./Repo.ts"

/** The account charged: what a 413 names. */
export interface QuotaOwner {
  readonly id: number
  readonly name: string
}

export interface NewRule {
  readonly name: string
  /** Bytes, -1 unlimited; `null`/absent is refused by rule creation and means 0 in group creation. */
  readonly limit?: number | null | undefined
  readonly subjects?: ReadonlyArray<string> | null | undefined
}

export interface RuleChanges {
  readonly limit?: number | null | undefined
  readonly subjects?: ReadonlyArray<string> | null | undefined
}

// An account's groups and rules change only by administration: kept in memory for this long, and
// dropped at once when an administrator changes anything through this process (another node's
// changes apply here within the time to live).
const GROUPS_TTL_MS = 10_000
const GROUPS_CACHE_MAX = 10_000

export class QuotaService extends Context.Service<
  QuotaService,
  {
    /** `[quota] ENABLED`: when false, every check passes without a query. */
    readonly enabled: boolean
    /** Whether the account may store more for `subject` (always, when quotas are off). */
    readonly allows: (ownerId: number, subject: Subject) => Effect.Effect<boolean>
    /**
     * 413 `quota exceeded` naming `owner` when it may not store more for `subject`. Every operation
     * that grows what an account stores calls this first, for the account that owns the result.
     */
    readonly enforce: (owner: QuotaOwner, subject: Subject) => Effect.Effect<void, Errors.PayloadTooLarge>
    /**
     * Why a git push to a repository of `owner` is refused, or `undefined` when it may go on: as
     * Forgejo's pre-receive hook, the owner's current usage is checked against `size:repos:all`.
     */
    readonly pushRefusal: (owner: QuotaOwner) => Effect.Effect<string | undefined>
    /** What the account uses and the groups that apply to it (its own, else `[quota] DEFAULT_GROUPS`). */
    readonly info: (userId: number) => Effect.Effect<{ readonly used: Used; readonly groups: ReadonlyArray<Group> }>
    /** A page of the files counted in the account's `size:assets:attachments:*`, and how many there are. */
    readonly attachments: (
      userId: number,
      page: Page
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<QuotaAttachmentRow>; readonly total: number }>

    readonly listRules: Effect.Effect<Array<Rule>>
    readonly getRule: (name: string) => Effect.Effect<Rule, Errors.NotFound>
    readonly createRule: (input: NewRule) => Effect.Effect<Rule, Errors.ValidationFailed | Errors.Conflict>
    /** Changes the fields given (none: the rule as it is). */
    readonly editRule: (
      name: string,
      changes: RuleChanges
    ) => Effect.Effect<Rule, Errors.NotFound | Errors.ValidationFailed>
    /** Also takes it out of every group. */
    readonly deleteRule: (name: string) => Effect.Effect<void, Errors.NotFound>

    readonly listGroups: Effect.Effect<Array<Group>>
    readonly getGroup: (name: string) => Effect.Effect<Group, Errors.NotFound>
    /**
     * One transaction: the group, each listed rule created (limit 0 when not given) unless one of
     * that name exists (then used unchanged), all added to the group. Any failure leaves nothing.
     */
    readonly createGroup: (
      name: string,
      rules: ReadonlyArray<NewRule>
    ) => Effect.Effect<Group, Errors.ValidationFailed | Errors.Conflict>
    readonly deleteGroup: (name: string) => Effect.Effect<void, Errors.NotFound>
    /** 404 unknown group; 422 unknown rule; 409 already in it. */
    readonly addRule: (
      group: string,
      rule: string
    ) => Effect.Effect<void, Errors.NotFound | Errors.ValidationFailed | Errors.Conflict>
    /** 404 unknown group or rule, or a rule not in the group. */
    readonly removeRule: (group: string, rule: string) => Effect.Effect<void, Errors.NotFound>
    readonly usersIn: (group: string) => Effect.Effect<Array<UserRow>, Errors.NotFound>
    /** 404 unknown group; 409 already in it. */
    readonly addUser: (group: string, user: UserRow) => Effect.Effect<void, Errors.NotFound | Errors.Conflict>
    /** 404 unknown group, or not in it. */
    readonly removeUser: (group: string, user: UserRow) => Effect.Effect<void, Errors.NotFound>
    /** The account is in exactly these groups afterwards; an unknown one (422) changes nothing. */
    readonly setUserGroups: (
      user: UserRow,
      groups: ReadonlyArray<string>
    ) => Effect.Effect<void, Errors.ValidationFailed>
  }
>()("hearth/quota/QuotaService") {
  static readonly layer = Layer.effect(
    QuotaService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const sql = yield* SqlClient
      const repo = yield* QuotaRepo
      const enabled = settings.quota.ENABLED
      const defaults = settings.quota.DEFAULT_GROUPS
      const defaultTotal = settings["quota.default"].TOTAL

      // Rule failures roll the transaction back and stay typed; database errors are defects.
      const transaction = sqlTransaction(sql)

      const found = <A>(effect: Effect.Effect<Option.Option<A>>) =>
        Effect.flatMap(effect, (row) =>
          Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(Errors.notFound())
        )

      const subjectsOf = (texts: ReadonlyArray<string> | null | undefined) => {
        const parsed = parseSubjects(texts ?? [])
        return "unknown" in parsed
          ? Effect.fail(Errors.validationFailed(unrecognizedSubject(parsed.unknown)))
          : Effect.succeed(parsed.subjects)
      }

      const named = (name: string) =>
        name === ""
          ? Effect.fail(Errors.validationFailed("[Name]: Required"))
          : name.length > NAME_MAX.quota
            ? Effect.fail(Errors.validationFailed(`[Name]: MaxSize (${NAME_MAX.quota})`))
            : Effect.void

      const cache = new Map<number, { readonly groups: Array<Group>; readonly expires: number }>()
      // Bumped by every administrative change: a look-up that started before one must not put
      // what it read into the cache.
      let generation = 0
      const changed = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.ensuring(
          effect,
          Effect.sync(() => {
            generation++
            cache.clear()
          })
        )

      const groupsOf = (ownerId: number) =>
        Effect.suspend(() => {
          const hit = cache.get(ownerId)
          if (hit !== undefined && hit.expires > Date.now()) return Effect.succeed(hit.groups)
          const started = generation
          return Effect.tap(repo.groupsOf(ownerId, defaults), (groups) =>
            Effect.sync(() => {
              if (started !== generation) return
              if (cache.size >= GROUPS_CACHE_MAX) cache.clear()
              cache.set(ownerId, { groups, expires: Date.now() + GROUPS_TTL_MS })
            })
          )
        })

      // The usage is read only when the verdict depends on it, and then fresh: one indexed query.
      const allows = (ownerId: number, subject: Subject) =>
        enabled
          ? Effect.flatMap(groupsOf(ownerId), (groups) => {
              const known = verdictWithoutUsage(groups, subject, defaultTotal)
              return known !== undefined
                ? Effect.succeed(known)
                : Effect.map(repo.usedBy(ownerId), (used) => evaluateGroups(groups, used, subject, defaultTotal))
            })
          : Effect.succeed(true)

      return QuotaService.of({
        enabled,
        allows,
        enforce: (owner, subject) =>
          enabled
            ? Effect.flatMap(allows(owner.id, subject), (ok) =>
                ok ? Effect.void : Effect.fail(Errors.quotaExceeded(owner))
              )
            : Effect.void,
        pushRefusal: (owner) =>
          Effect.map(allows(owner.id, "size:repos:all"), (ok) =>
            ok
              ? undefined
              : `Hearth: quota exceeded: ${owner.name} may not store more repository data (size:repos:all); ` +
                "pushes that only delete branches or tags are still accepted"
          ),
        // Fresh, not cached: what an administrator sees right after changing it.
        info: (userId) =>
          Effect.all(
            { used: repo.usedBy(userId), groups: repo.groupsOf(userId, defaults) },
            { concurrency: "unbounded" }
          ),
        attachments: repo.attachmentsOf,

        listRules: repo.listRules,
        getRule: (name) => found(repo.findRule(name)),
        createRule: (input) =>
          changed(
            Effect.gen(function* () {
              yield* named(input.name)
              if (input.limit === undefined || input.limit === null)
                return yield* Errors.validationFailed("[Limit]: Required")
              const rule: Rule = { name: input.name, limit: input.limit, subjects: yield* subjectsOf(input.subjects) }
              if (!(yield* repo.insertRule(rule)))
                return yield* Errors.conflict(`rule already exists: [name: ${rule.name}]`)
              return rule
            })
          ),
        editRule: (name, changes) =>
          changed(
            Effect.gen(function* () {
              const subjects =
                changes.subjects === undefined || changes.subjects === null
                  ? undefined
                  : yield* subjectsOf(changes.subjects)
              return yield* found(repo.updateRule(name, { limit: changes.limit ?? undefined, subjects }))
            })
          ),
        deleteRule: (name) =>
          changed(
            Effect.flatMap(repo.deleteRule(name), (deleted) => (deleted ? Effect.void : Effect.fail(Errors.notFound())))
          ),

        listGroups: repo.listGroups,
        getGroup: (name) => found(repo.findGroup(name)),
        createGroup: (name, rules) =>
          changed(
            Effect.gen(function* () {
              yield* named(name)
              return yield* transaction(
                Effect.gen(function* () {
                  if (!(yield* repo.insertGroup(name)))
                    return yield* Errors.conflict(`group already exists: [name: ${name}]`)
                  for (const input of rules) {
                    yield* named(input.name)
                    if (Option.isNone(yield* repo.findRule(input.name))) {
                      const subjects = yield* subjectsOf(input.subjects)
                      yield* repo.insertRule({ name: input.name, limit: input.limit ?? 0, subjects })
                    }
                    // A rule listed twice is in the group once.
                    yield* repo.addRule(name, input.name)
                  }
                  return yield* Effect.flatMap(repo.findGroup(name), (group) =>
                    Option.isSome(group)
                      ? Effect.succeed(group.value)
                      : Effect.die(new Error(`quota group ${name} vanished`))
                  )
                })
              )
            })
          ),
        deleteGroup: (name) =>
          changed(
            Effect.flatMap(repo.deleteGroup(name), (deleted) =>
              deleted ? Effect.void : Effect.fail(Errors.notFound())
            )
          ),
        addRule: (group, rule) =>
          changed(
            Effect.gen(function* () {
              yield* found(repo.findGroup(group))
              if (Option.isNone(yield* repo.findRule(rule))) {
                return yield* Errors.validationFailed(`rule not found: [name: ${rule}]`)
              }
              if (!(yield* repo.addRule(group, rule))) {
                return yield* Errors.conflict(`rule already in group: [group: ${group}, rule: ${rule}]`)
              }
            })
          ),
        removeRule: (group, rule) =>
          changed(
            Effect.gen(function* () {
              yield* found(repo.findGroup(group))
              yield* found(repo.findRule(rule))
              if (!(yield* repo.removeRule(group, rule))) return yield* Errors.notFound()
            })
          ),
        usersIn: (group) => Effect.andThen(found(repo.findGroup(group)), repo.usersIn(group)),
        addUser: (group, user) =>
          changed(
            Effect.gen(function* () {
              yield* found(repo.findGroup(group))
              if (!(yield* repo.addUser(group, user.id))) {
                return yield* Errors.conflict(`user already in group: [group: ${group}, userID: ${user.id}]`)
              }
            })
          ),
        removeUser: (group, user) =>
          changed(
            Effect.gen(function* () {
              yield* found(repo.findGroup(group))
              if (!(yield* repo.removeUser(group, user.id))) return yield* Errors.notFound()
            })
          ),
        setUserGroups: (user, groups) =>
          changed(
            transaction(
              Effect.gen(function* () {
                yield* repo.clearUser(user.id)
                for (const group of groups) {
                  if (Option.isNone(yield* repo.findGroup(group)))
                    return yield* Errors.validationFailed(`group not found: [group: ${group}]`)
                  yield* repo.addUser(group, user.id)
                }
              })
            )
          )
      })
    })
  )
}
