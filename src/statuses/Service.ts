// Commit status rules (Forgejo's services/repository/commitstatus, models/git/commit_status.go):
// the states, the combined state of a commit, and the state of the contexts a branch rule
// requires (services/pull/commit_status.go `MergeRequiredContextsCommitStatus`), which the merge
// gate (src/protection) reads.
import { Context, Effect, Layer } from "effect"
import { subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { globMatch } from "../lib/Glob.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { STATES, type StatusState } from "./Api.ts"
import { StatusesRepo, type StatusRow, type StatusSort } from "./Repo.ts"

export { STATES, type StatusState }

/** Worst first: Forgejo's `CommitStatusState.NoBetterThan` order. */
const RANK: Record<StatusState, number> = { error: 0, failure: 1, warning: 2, pending: 3, success: 4 }

const isState = (value: string): value is StatusState => (STATES as ReadonlyArray<string>).includes(value)

/**
 * The combined state of statuses (Forgejo's `CalcCommitStatus`): the worst, with `error` reported
 * as `failure`; "" when there are none.
 */
export const combinedState = (states: ReadonlyArray<string>): StatusState | "" => {
  let worst: StatusState | undefined
  for (const state of states) {
    if (!isState(state)) continue
    if (worst === undefined || RANK[state] < RANK[worst]) worst = state
  }
  if (worst === undefined) return ""
  return worst === "error" ? "failure" : worst
}

/**
 * The state of the contexts a branch rule requires, over the latest status per context
 * (`MergeRequiredContextsCommitStatus`): each pattern (a glob without separators) needs a matching
 * status — else `pending` — and counts its worst; with no patterns, or none given, the worst of all.
 * Only `success` lets a merge through.
 */
export const requiredContextsState = (
  latest: ReadonlyArray<{ readonly context: string; readonly state: string }>,
  patterns: ReadonlyArray<string>
): StatusState | "" => {
  if (patterns.length === 0) return combinedState(latest.map((s) => s.state))
  const states: Array<string> = []
  for (const pattern of patterns) {
    const matched = latest.filter((s) => globMatch(pattern, s.context))
    if (matched.length === 0) return "pending"
    states.push(...matched.map((s) => s.state))
  }
  return combinedState(states)
}

const SORTS: ReadonlyArray<StatusSort> = ["oldest", "recentupdate", "leastupdate", "leastindex", "highestindex"]

/** Forgejo's `sort` (anything else is newest first). */
export const statusSort = (value: string | undefined): StatusSort => SORTS.find((s) => s === value) ?? "newest"

/** Forgejo's `state` filter: one of the five states, else no filter. */
export const stateFilter = (value: string | undefined): string | undefined =>
  value !== undefined && isState(value) ? value : undefined

export interface StatusInput {
  readonly state?: string | undefined
  readonly target_url?: string | undefined
  readonly description?: string | undefined
  readonly context?: string | undefined
}

const MAX_TEXT = 2048

/** The trimmed input, or why it is refused. */
const validated = (input: StatusInput) => {
  const state = (input.state ?? "").trim()
  const targetUrl = (input.target_url ?? "").trim()
  const description = (input.description ?? "").trim()
  const context = (input.context ?? "").trim()
  // Forgejo stores any state text; Hearth refuses what no reader could interpret.
  if (!isState(state)) return Errors.validationFailed(`[State]: must be one of ${STATES.join(", ")}`)
  if (targetUrl !== "") {
    let url: URL | undefined
    try {
      url = new URL(targetUrl)
    } catch {
      url = undefined
    }
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:"))
      return Errors.validationFailed("[TargetURL]: must be an absolute http or https URL")
  }
  for (const [name, value] of [
    ["TargetURL", targetUrl],
    ["Description", description],
    ["Context", context]
  ] as const) {
    if (value.length > MAX_TEXT) return Errors.validationFailed(`[${name}]: at most ${MAX_TEXT} characters`)
  }
  return { state, targetUrl, description, context }
}

/** How far back the branch protection form looks for status contexts (Forgejo: one week). */
const RECENT_CONTEXTS_MS = 7 * 24 * 60 * 60 * 1000

export class StatusesService extends Context.Service<
  StatusesService,
  {
    /** Posts a status for the full commit id `sha` (checked by the caller) and publishes it. */
    readonly create: (
      owner: UserRow,
      repo: RepoRow,
      doer: UserRow,
      sha: string,
      input: StatusInput
    ) => Effect.Effect<StatusRow, Errors.ValidationFailed>
    readonly list: (
      repoId: number,
      sha: string,
      options: { readonly sort: StatusSort; readonly state: string | undefined },
      page: Page
    ) => Effect.Effect<{ readonly rows: Array<StatusRow>; readonly total: number }>
    readonly latest: (
      repoId: number,
      sha: string,
      page: Page | undefined
    ) => Effect.Effect<{ readonly rows: Array<StatusRow>; readonly total: number }>
    /**
     * The contexts posted to the repository in the last week, for the branch protection form
     * (Forgejo's `FindRepoRecentCommitStatusContexts`).
     */
    readonly recentContexts: (repoId: number) => Effect.Effect<Array<string>>
  }
>()("hearth/statuses/StatusesService") {
  static readonly layer = Layer.effect(
    StatusesService,
    Effect.gen(function* () {
      const repo = yield* StatusesRepo
      const events = yield* EventHub
      return StatusesService.of({
        create: (owner, repository, doer, sha, input) =>
          Effect.gen(function* () {
            const checked = validated(input)
            if (checked instanceof Errors.ValidationFailed) return yield* checked
            const row = yield* repo.insert(repository.id, sha, { ...checked, creatorId: doer.id })
            yield* events.publish({
              _tag: "CommitStatus",
              ...subject(owner, repository, doer),
              sha,
              context: row.context,
              state: row.state,
              index: row.index
            })
            return row
          }),
        list: (repoId, sha, options, page) => repo.list(repoId, sha, options, page),
        latest: (repoId, sha, page) => repo.latest(repoId, sha, page),
        recentContexts: (repoId) => repo.recentContexts(repoId, new Date(Date.now() - RECENT_CONTEXTS_MS))
      })
    })
  )
}
