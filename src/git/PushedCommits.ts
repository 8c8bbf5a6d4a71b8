// The commits one ref update of a push brought, as Forgejo's push notifier reads them
// (services/repository/push.go: `CommitsBeforeUntil(old)`, or for a new branch its last
// `CommitsBeforeLimit(10)`), newest first with their changed files. The one reader for every
// consumer of a push: the activity feed's action (src/activities) and the webhook payloads
// (src/webhooks/Payloads.ts) — so the two always agree on the commits and their count.
//
// Both read the same push within moments of each other (the feed in-process, the webhooks from the
// durable queue), so a read is kept for a short while and the second reader gets it without
// running git again. `before..after` names the same commits forever (object ids), so a kept read
// is never stale; the cache is small and short-lived only to bound memory.
import { Effect } from "effect"
import * as Git from "./Git.ts"

/** A new branch lists at most this many of its last commits (Forgejo's `CommitsBeforeLimit(10)`). */
export const NEW_BRANCH_COMMITS = 10

export interface PushedCommit {
  readonly sha: string
  readonly authorName: string
  readonly authorEmail: string
  /** ISO 8601, as git prints it (`%aI`). */
  readonly authorDate: string
  readonly committerName: string
  readonly committerEmail: string
  readonly committerDate: string
  /** The raw message (`%B`). */
  readonly message: string
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly modified: ReadonlyArray<string>
}

export interface PushedCommits {
  /** Newest first: at most the `limit` asked for (a new branch: at most NEW_BRANCH_COMMITS). */
  readonly commits: ReadonlyArray<PushedCommit>
  /** How many the push brought (Forgejo's `Len`): a new branch counts those listed. */
  readonly total: number
}

// Enough for every ref of several large pushes (a push of 25 new branches is 25 reads): the webhooks'
// durable hop may be a few pushes behind the feed, and a read evicted before it comes is a second `git log`.
const KEPT = 512
const KEPT_MS = 60_000
const kept = new Map<string, { readonly at: number; readonly limit: number; readonly read: PushedCommits }>()
// Reads still running: the feed (in-process, during the push's publish) and the webhooks' hop (from
// the durable queue) often ask for the same push at the same moment; the second waits for the
// first's `git log` instead of starting its own.
const reading = new Map<string, { readonly limit: number; readonly read: Effect.Effect<PushedCommits, Git.GitError> }>()

const complete = (read: PushedCommits) => read.commits.length >= read.total

const parse = (out: string): Array<PushedCommit> =>
  out
    .split("\x1e")
    .slice(1)
    .map((record) => {
      const fields = record.split("\x00")
      const [sha, an, ae, ad, cn, ce, cd, message] = fields as [
        string,
        string,
        string,
        string,
        string,
        string,
        string,
        string
      ]
      const added: Array<string> = []
      const removed: Array<string> = []
      const modified: Array<string> = []
      for (const line of (fields[8] ?? "").split("\n")) {
        const tab = line.indexOf("\t")
        if (tab < 0) continue
        const status = line.slice(0, tab)
        const file = line.slice(tab + 1)
        if (status.startsWith("A")) added.push(file)
        else if (status.startsWith("D")) removed.push(file)
        else modified.push(file)
      }
      return {
        sha,
        authorName: an,
        authorEmail: ae,
        authorDate: ad,
        committerName: cn,
        committerEmail: ce,
        committerDate: cd,
        message: message ?? "",
        added,
        removed,
        modified
      }
    })

/**
 * The commits `before..after` in `repo` (a branch's update; `before` zero: a new branch), at most
 * `limit` of them listed, and how many there are (`rev-list --count` only when the list was cut).
 */
export const pushedCommits = (
  repo: string,
  before: string,
  after: string,
  limit: number
): Effect.Effect<PushedCommits, Git.GitError> =>
  Effect.suspend(() => {
    const key = `${repo}\x00${before}\x00${after}`
    const now = Date.now()
    const hit = kept.get(key)
    if (hit !== undefined && now - hit.at < KEPT_MS && (hit.limit >= limit || complete(hit.read))) {
      return Effect.succeed(hit.read)
    }
    const created = before === Git.ZERO_SHA
    const range = created ? [after] : [`${before}..${after}`]
    const cap = created ? NEW_BRANCH_COMMITS : Math.max(1, limit)
    const read = Effect.gen(function* () {
      const out = yield* Git.inRepo(repo, [
        "-c",
        "core.quotePath=false",
        "log",
        "--no-renames",
        "--name-status",
        "--format=%x1e%H%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B%x00",
        "-n",
        String(cap),
        ...range,
        "--"
      ])
      const commits = parse(out.stdout.toString("utf8"))
      const counted =
        created || commits.length < cap
          ? commits.length
          : Number((yield* Git.inRepo(repo, ["rev-list", "--count", ...range, "--"])).stdout.toString("utf8").trim())
      const read: PushedCommits = { commits, total: Number.isFinite(counted) ? counted : commits.length }
      for (const [k, v] of kept) if (now - v.at >= KEPT_MS || kept.size >= KEPT) kept.delete(k)
      kept.set(key, { at: now, limit: created ? Number.POSITIVE_INFINITY : cap, read })
      return read
    })
    const running = reading.get(key)
    if (running !== undefined) {
      // Enough if it lists at least as many, or all there are; else a read of its own.
      return Effect.flatMap(running.read, (done) =>
        running.limit >= cap || complete(done) ? Effect.succeed(done) : read
      )
    }
    return Effect.flatMap(Effect.cached(read), (shared) => {
      const entry = { limit: created ? Number.POSITIVE_INFINITY : cap, read: shared }
      reading.set(key, entry)
      return Effect.ensuring(
        shared,
        Effect.sync(() => {
          if (reading.get(key) === entry) reading.delete(key)
        })
      )
    })
  })
