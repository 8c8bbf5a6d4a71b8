// Package cleanup rules and their periodic run (Forgejo's services/packages/cleanup/cleanup.go,
// models/packages/package_cleanup_rule.go; CONTRACT-PACKAGES §9). A rule belongs to an owner and
// a type; for each package of that owner and type, its non-internal versions newest first:
// the first `keep_count` stay, those matching `keep_pattern` stay, those younger than
// `remove_days` stay, and with `remove_pattern` only matching ones go. Patterns are anchored,
// case-insensitive regular expressions over the lower-cased version (or `name/version` with
// `match_full_name`). Deletions by rules fire no webhook, as in Forgejo. The run also removes
// packages left without versions; their blobs go with the storage's sweep.
//
// Forgejo manages rules on web settings pages only; Hearth manages them with admin API routes
// (/api/v1/admin/packages/cleanup-rules, Api.ts) and runs them at start and every 24 hours (Forgejo's
// `cleanup_packages` cron: at start and @midnight), or on demand (POST …/cleanup-rules/-/run).
import { Context, Duration, Effect, Layer, Option, Schedule, type Scope } from "effect"
import { PACKAGE_TYPES } from "../config/Settings.ts"
import * as Errors from "../http/Errors.ts"
import { makeContainerCleanup } from "./container/Cleanup.ts"
import { type CleanupRuleRow, PackagesRepo } from "./Repo.ts"

export interface RuleInput {
  readonly enabled?: boolean | undefined
  readonly keepCount?: number | undefined
  readonly keepPattern?: string | undefined
  readonly removeDays?: number | undefined
  readonly removePattern?: string | undefined
  readonly matchFullName?: boolean | undefined
}

const RUN_EVERY = Duration.hours(24)

/** Forgejo's anchored, case-insensitive pattern; undefined for an empty one, an error text for a bad one. */
const compile = (field: string, pattern: string): RegExp | undefined | string => {
  if (pattern === "") return undefined
  try {
    return new RegExp(`^(?:${pattern})$`, "i")
  } catch (e) {
    return `invalid ${field} "${pattern}": ${(e as Error).message}`
  }
}

/** The versions of one package (newest first) that `rule` removes, at time `now`. */
export const cleanupTargets = <V extends { readonly lowerVersion: string; readonly createdAt: Date }>(
  rule: CleanupRuleRow,
  lowerName: string,
  versions: ReadonlyArray<V>,
  now: Date
): Array<V> => {
  const keep = compile("keep_pattern", rule.keepPattern)
  const remove = compile("remove_pattern", rule.removePattern)
  if (typeof keep === "string" || typeof remove === "string") return []
  const cutoff = now.getTime() - rule.removeDays * 24 * 60 * 60 * 1000
  return versions.filter((v, index) => {
    if (index < rule.keepCount) return false
    const subject = rule.matchFullName ? `${lowerName}/${v.lowerVersion}` : v.lowerVersion
    if (keep?.test(subject)) return false
    if (rule.removeDays > 0 && v.createdAt.getTime() > cutoff) return false
    if (remove !== undefined && !remove.test(subject)) return false
    return true
  })
}

export class PackageCleanup extends Context.Service<
  PackageCleanup,
  {
    readonly list: (ownerId?: number) => Effect.Effect<Array<CleanupRuleRow>>
    readonly create: (
      ownerId: number,
      type: string,
      input: RuleInput
    ) => Effect.Effect<CleanupRuleRow, Errors.ValidationFailed | Errors.Conflict>
    readonly edit: (
      id: number,
      input: RuleInput
    ) => Effect.Effect<CleanupRuleRow, Errors.ValidationFailed | Errors.NotFound>
    readonly remove: (id: number) => Effect.Effect<void, Errors.NotFound>
    /** Applies every enabled rule now; the number of versions removed. */
    readonly run: Effect.Effect<number>
    /** Applies them now and then daily, for the scope's lifetime (the server starts it once it answers). */
    readonly start: Effect.Effect<void, never, Scope.Scope>
  }
>()("hearth/packages/PackageCleanup") {
  static readonly layer = Layer.effect(
    PackageCleanup,
    Effect.gen(function* () {
      const repo = yield* PackagesRepo
      const containerCleanup = yield* makeContainerCleanup

      const problem = (rule: Omit<CleanupRuleRow, "id" | "ownerId">): string | undefined => {
        if (!(PACKAGE_TYPES as ReadonlyArray<string>).includes(rule.type)) return `unknown package type "${rule.type}"`
        if (!Number.isInteger(rule.keepCount) || rule.keepCount < 0) return "keep_count must be 0 or more"
        if (!Number.isInteger(rule.removeDays) || rule.removeDays < 0) return "remove_days must be 0 or more"
        for (const [field, pattern] of [
          ["keep_pattern", rule.keepPattern],
          ["remove_pattern", rule.removePattern]
        ] as const) {
          const compiled = compile(field, pattern)
          if (typeof compiled === "string") return compiled
        }
        return undefined
      }
      const merged = (base: Omit<CleanupRuleRow, "id" | "ownerId" | "type">, input: RuleInput) => ({
        enabled: input.enabled ?? base.enabled,
        keepCount: input.keepCount ?? base.keepCount,
        keepPattern: input.keepPattern ?? base.keepPattern,
        removeDays: input.removeDays ?? base.removeDays,
        removePattern: input.removePattern ?? base.removePattern,
        matchFullName: input.matchFullName ?? base.matchFullName
      })

      const run = Effect.gen(function* () {
        let removed = 0
        const now = new Date()
        for (const rule of yield* repo.rules()) {
          if (!rule.enabled) continue
          const rows = yield* repo.versionsForCleanup(rule.ownerId, rule.type)
          const byPackage = new Map<number, typeof rows>()
          for (const row of rows) byPackage.set(row.pkg.id, [...(byPackage.get(row.pkg.id) ?? []), row])
          for (const versions of byPackage.values()) {
            const targets = cleanupTargets(
              rule,
              versions[0]!.pkg.lowerName,
              versions.map((v) => v.version),
              now
            )
            for (const target of targets) if (yield* repo.transaction(repo.deleteVersion(target.id))) removed++
          }
        }
        yield* containerCleanup
        yield* repo.deleteEmptyPackages
        return removed
      })

      return PackageCleanup.of({
        list: (ownerId) => repo.rules(ownerId),
        create: (ownerId, type, input) =>
          Effect.gen(function* () {
            const rule = {
              type,
              ...merged(
                {
                  enabled: true,
                  keepCount: 0,
                  keepPattern: "",
                  removeDays: 0,
                  removePattern: "",
                  matchFullName: false
                },
                input
              )
            }
            const refused = problem(rule)
            if (refused !== undefined) return yield* Errors.validationFailed(refused)
            const inserted = yield* repo.insertRule({ ownerId, ...rule })
            if (Option.isNone(inserted))
              return yield* Errors.conflict(`the owner has a cleanup rule for ${type} packages already`)
            return inserted.value
          }),
        edit: (id, input) =>
          Effect.gen(function* () {
            const found = yield* repo.ruleById(id)
            if (Option.isNone(found)) return yield* Errors.notFound()
            const rule = { ...found.value, ...merged(found.value, input) }
            const refused = problem(rule)
            if (refused !== undefined) return yield* Errors.validationFailed(refused)
            const updated = yield* repo.updateRule(rule)
            if (Option.isNone(updated)) return yield* Errors.notFound()
            return updated.value
          }),
        remove: (id) =>
          Effect.flatMap(repo.deleteRule(id), (deleted) => (deleted ? Effect.void : Effect.fail(Errors.notFound()))),
        run,
        start: Effect.asVoid(
          Effect.forkScoped(
            Effect.repeat(
              run.pipe(
                Effect.tap((n) =>
                  n > 0 ? Effect.logInfo(`package cleanup rules removed ${n} versions`) : Effect.void
                ),
                Effect.ignoreCause({ log: "Warn", message: "could not run the package cleanup rules" })
              ),
              Schedule.spaced(RUN_EVERY)
            )
          )
        )
      })
    })
  )
}
