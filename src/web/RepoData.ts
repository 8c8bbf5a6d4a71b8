// What the repository pages read from git, through the existing readers (ContentsService's
// long-lived `cat-file` processes, src/branches/Service.ts for commits), with the little they keep:
// commits by id (a commit never changes, so the cache is only bounded), and each repository's list
// of refs while its ref files are unchanged (see `refsStamp`): a page view spawns no git process
// (a spawn costs 10–20 ms in a process the size of Hearth's: `npm run bench:web`).
//
// A page's URL says what a name is, as Forgejo's do: `/src/branch/{name}/{path}`,
// `/src/tag/{name}/{path}`, `/src/commit/{id}/{path}`. A branch or tag name may hold `/`, so the
// name is the part of the path that names an existing ref (Forgejo's `getRefNameFromPath`); git
// never lets `a` and `a/b` exist side by side, so at most one prefix can match.
import { readdirSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { type CommitInfo, readCommits } from "../branches/Service.ts"
import { ContentsService, type RepoHandle } from "../contents/Service.ts"
import * as Git from "../git/Git.ts"
import { cleanPath } from "../git/Readers.ts"
import { branchNameProblem } from "../lib/Names.ts"

export type RefKind = "branch" | "tag" | "commit"

/** A revision named by a page's URL, resolved to a commit, and the path after it. */
export interface ResolvedRef {
  readonly kind: RefKind
  /** The branch or tag name, or the full commit id. */
  readonly name: string
  readonly commit: string
  /** The commit's root tree. */
  readonly tree: string
  /** The rest of the URL's path, cleaned (no leading or trailing `/`). */
  readonly path: string
}

export interface RepoRefs {
  /** Branch names, sorted. */
  readonly branches: ReadonlyArray<string>
  /** Tag names, sorted. */
  readonly tags: ReadonlyArray<string>
  /** Full ref name → the id it holds (a tag object for an annotated tag). */
  readonly ids: ReadonlyMap<string, string>
}

/** A short commit id as Forgejo shows it (10 characters). */
export const shortSha = (sha: string) => sha.slice(0, 10)

/** The first line of a commit message. */
export const subjectOf = (message: string) => {
  const end = message.indexOf("\n")
  return (end < 0 ? message : message.slice(0, end)).trim()
}

/** The rest of a commit message after its first line ("" when none). */
export const bodyOf = (message: string) => {
  const end = message.indexOf("\n")
  return end < 0 ? "" : message.slice(end + 1).trim()
}

const HEX = /^[0-9a-f]{4,64}$/

/** A bounded map whose oldest entries go first. */
class Bounded<V> {
  private readonly entries = new Map<string, V>()
  private readonly max: number
  constructor(max: number) {
    this.max = max
  }
  get(key: string): V | undefined {
    const value = this.entries.get(key)
    if (value !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, value)
    }
    return value
  }
  set(key: string, value: V) {
    this.entries.delete(key)
    this.entries.set(key, value)
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!)
  }
}

/**
 * What changes whenever a branch or tag is created, moved or deleted in a repository using git's
 * files backend (what `git init` makes): `packed-refs` (rewritten whole, through a lock file and a
 * rename) and every directory under `refs/heads` and `refs/tags` (a loose ref is written the same
 * way, in its directory; a new or emptied sub-directory changes its parent). Modification times
 * and sizes, joined; undefined when something cannot be read, or was changed so recently that a
 * second change in the same clock tick would leave the same stamp (git's "racy" check of its index):
 * then nothing is cached.
 */
/** Changes younger than this are not trusted to show in a stamp (file system clocks tick coarsely). */
const RACY_NS = 100_000_000n

export const refsStamp = (dir: string): string | undefined => {
  const parts: Array<string> = []
  let newest = 0n
  const stamp = (path: string) => {
    const st = statSync(path, { bigint: true, throwIfNoEntry: false })
    parts.push(st === undefined ? "-" : `${st.mtimeNs}:${st.ino}:${st.size}`)
    if (st !== undefined && st.mtimeNs > newest) newest = st.mtimeNs
    return st
  }
  const walk = (path: string, depth: number) => {
    const st = stamp(path)
    if (st === undefined || !st.isDirectory() || depth > 32) return
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(path, entry.name), depth + 1)
    }
  }
  try {
    stamp(join(dir, "packed-refs"))
    walk(join(dir, "refs", "heads"), 0)
    walk(join(dir, "refs", "tags"), 0)
    if (BigInt(Date.now()) * 1_000_000n - newest < RACY_NS) return undefined
    return parts.join("|")
  } catch {
    return undefined
  }
}

export const makeRepoData = Effect.gen(function* () {
  const contents = yield* ContentsService
  const commits = new Bounded<CommitInfo>(20_000)

  /**
   * The commits with these ids (full ids that exist), read once each and then kept; one `git log`
   * for all of those not seen before.
   */
  const commitsOf = (handle: RepoHandle, shas: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const found = new Map<string, CommitInfo>()
      const missing: Array<string> = []
      for (const sha of new Set(shas)) {
        const hit = commits.get(sha)
        if (hit !== undefined) found.set(sha, hit)
        else if (Git.isSha(sha)) missing.push(sha)
      }
      if (missing.length > 0) {
        for (const commit of yield* readCommits(handle.dir, missing)) {
          commits.set(commit.sha, commit)
          found.set(commit.sha, commit)
        }
      }
      return found
    })

  const commitOne = (handle: RepoHandle, sha: string) => Effect.map(commitsOf(handle, [sha]), (all) => all.get(sha))

  /**
   * The revision `segments` start with, as `kind` says, and the path after it; none when no ref
   * of that kind matches (or the path is not acceptable).
   */
  const resolve = (handle: RepoHandle, kind: RefKind, segments: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const finish = (name: string, found: { commit: string; tree: string }, rest: ReadonlyArray<string>) => {
        const cleaned = cleanPath(rest.join("/"))
        return "problem" in cleaned
          ? Option.none<ResolvedRef>()
          : Option.some<ResolvedRef>({ kind, name, commit: found.commit, tree: found.tree, path: cleaned.path })
      }
      if (kind === "commit") {
        const id = (segments[0] ?? "").toLowerCase()
        if (!HEX.test(id)) return Option.none<ResolvedRef>()
        const found = yield* contents.commitOf(handle, id)
        return Option.isNone(found)
          ? Option.none<ResolvedRef>()
          : finish(found.value.commit, found.value, segments.slice(1))
      }
      const prefix = kind === "branch" ? "refs/heads/" : "refs/tags/"
      for (let n = 1; n <= segments.length; n++) {
        const name = segments.slice(0, n).join("/")
        if (branchNameProblem(name) !== undefined) continue
        const found = yield* contents.commitOf(handle, `${prefix}${name}`)
        if (Option.isSome(found)) return finish(name, found.value, segments.slice(n))
      }
      return Option.none<ResolvedRef>()
    })

  const refLists = new Bounded<{ readonly stamp: string; readonly refs: RepoRefs }>(1000)

  /** The repository's branches and tags: one `for-each-ref` after each change of its refs, else kept. */
  const refsOf = (handle: RepoHandle) =>
    Effect.suspend(() => {
      const stamp = refsStamp(handle.dir)
      const hit = refLists.get(handle.dir)
      if (stamp !== undefined && hit !== undefined && hit.stamp === stamp) return Effect.succeed(hit.refs)
      return Effect.map(Effect.orDie(Git.listRefs(handle.dir)), (all): RepoRefs => {
        const branches: Array<string> = []
        const tags: Array<string> = []
        const ids = new Map<string, string>()
        for (const ref of all) {
          ids.set(ref.ref, ref.sha)
          if (ref.ref.startsWith("refs/heads/")) branches.push(ref.ref.slice("refs/heads/".length))
          else if (ref.ref.startsWith("refs/tags/")) tags.push(ref.ref.slice("refs/tags/".length))
        }
        const refs = { branches, tags, ids }
        // The stamp taken before the listing: a change meanwhile makes the next view list again.
        if (stamp !== undefined) refLists.set(handle.dir, { stamp, refs })
        return refs
      })
    })

  return { commitsOf, commitOne, resolve, refsOf }
})

export type RepoData = Effect.Success<typeof makeRepoData>
