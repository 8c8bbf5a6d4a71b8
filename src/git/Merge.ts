// Merging without a work tree (pull requests: mergeability, every merge style, updating a branch):
// `git merge-tree --write-tree` computes the merged tree in the object store, `commit-tree` makes
// the commit, and the caller moves the ref through the Repository entity (compare-and-swap).
// Nothing here touches a ref, so running it twice or concurrently is harmless: at worst it leaves
// unreferenced objects for `gc`.
//
// Rebasing (cherry-picking each commit onto a new base) needs a three-way merge with an explicit
// base, which `merge-tree --merge-base` gives only from git 2.40; on 2.39 the same merge comes
// from a stand-in commit: the new base's tree with the picked commit's parent as its only parent,
// whose merge base with the picked commit is exactly that parent.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Data, Effect, Option } from "effect"
import * as Git from "./Git.ts"
import { type SignOptions, signingEnv } from "./GitData.ts"
import type * as Readers from "./Readers.ts"
import type { Signature } from "./Write.ts"
import * as Write from "./Write.ts"

/** Git failing while merging is a broken repository or a bug, not the caller's fault. */
const orDie = <A>(effect: Effect.Effect<A, Git.GitError>) => Effect.orDie(effect)

const text = (result: Git.RunResult) => result.stdout.toString("utf8").trim()

/** The best common ancestor of `a` and `b`, none for unrelated histories. */
export const mergeBase = (repo: string, a: string, b: string): Effect.Effect<Option.Option<string>> =>
  orDie(
    Effect.map(Git.inRepo(repo, ["merge-base", "--end-of-options", a, b], { answerCodes: [1] }), (r) =>
      r.exitCode === 0 && text(r) !== "" ? Option.some(text(r).split("\n")[0]!) : Option.none()
    )
  )

/** Whether `ancestor` is reachable from `descendant` (equal counts). */
export const isAncestor = (repo: string, ancestor: string, descendant: string): Effect.Effect<boolean> =>
  orDie(
    Effect.map(
      Git.inRepo(repo, ["merge-base", "--is-ancestor", "--end-of-options", ancestor, descendant], {
        answerCodes: [1]
      }),
      (r) => r.exitCode === 0
    )
  )

/**
 * Commits only in `head` (ahead), only in `base` (behind), and their merge base, from one `git rev-list --left-right
 * --boundary base...head` where it can: every merge base of the two is a boundary commit of their
 * symmetric difference (its child towards either side is not common, or it would be a better
 * common ancestor), so a single boundary commit is the merge base, and none means unrelated (or
 * equal) histories. With several boundary commits (merges of older branches) `git merge-base`
 * picks, as before: a second process only then.
 */
export const compare = (
  repo: string,
  base: string,
  head: string
): Effect.Effect<{ readonly ahead: number; readonly behind: number; readonly mergeBase: Option.Option<string> }> =>
  Effect.gen(function* () {
    if (base === head) return { ahead: 0, behind: 0, mergeBase: Option.some(base) }
    const listed = yield* orDie(
      Git.inRepo(repo, ["rev-list", "--left-right", "--boundary", "--end-of-options", `${base}...${head}`, "--"])
    )
    let ahead = 0
    let behind = 0
    const boundary = new Set<string>()
    for (const line of listed.stdout.toString("utf8").split("\n")) {
      if (line.startsWith(">")) ahead++
      else if (line.startsWith("<")) behind++
      else if (line.startsWith("-")) boundary.add(line.slice(1))
    }
    const found =
      boundary.size === 1
        ? Option.some([...boundary][0]!)
        : boundary.size === 0
          ? Option.none<string>()
          : yield* mergeBase(repo, base, head)
    return { ahead, behind, mergeBase: found }
  })

/** A comparison of two commits made earlier (a pull request's stored check): `compare`'s answer for them. */
export interface Compared {
  readonly base: string
  readonly head: string
  readonly mergeBase: string
  readonly ahead: number
  readonly behind: number
}

/**
 * The longest walks `compareSince` makes before it leaves the answer to `compare`: the pushed
 * commits (once per push, shared by its checks), a head's own commits (once per check: a reader
 * round trip per commit, where `compare` is one process).
 */
const PUSHED_LIMIT = 256
const HEAD_LIMIT = 64

/** The parents of a commit read through the long-lived reader; none if it is not a commit here. */
const parentsThrough = (pool: Readers.BatchPool, repo: string, sha: string) =>
  Effect.map(pool.read(repo, sha), (found) => {
    if (Option.isNone(found) || found.value.type !== "commit") return Option.none<ReadonlyArray<string>>()
    const parents: Array<string> = []
    // The header (`tree`, then `parent` lines) ends at the first empty line.
    for (const line of found.value.bytes.toString("latin1", 0, found.value.bytes.indexOf("\n\n")).split("\n")) {
      if (line.startsWith("parent ")) parents.push(line.slice(7))
    }
    return Option.some<ReadonlyArray<string>>(parents)
  })

/**
 * The commits reachable from `from` without going through `stop`, when every path from `from`
 * reaches `stop` within `limit` commits (each parent line ends there); none otherwise — a
 * root commit reached, a commit missing, too long a walk. When it closes, `stop` is an ancestor of
 * `from` and the commits found are exactly those of `stop..from` (one reachable from `stop` would
 * lead on to a root without meeting `stop`, so the walk would not have closed).
 */
const closedWalk = (pool: Readers.BatchPool, repo: string, from: string, stop: string, limit: number) =>
  Effect.gen(function* () {
    const seen = new Set<string>()
    let frontier = from === stop ? [] : [from]
    for (const sha of frontier) seen.add(sha)
    while (frontier.length > 0) {
      // A level at a time: the reader answers a level's requests written together.
      const levels = yield* Effect.forEach(frontier, (sha) => parentsThrough(pool, repo, sha), {
        concurrency: "unbounded"
      })
      const next: Array<string> = []
      for (const parents of levels) {
        if (Option.isNone(parents) || parents.value.length === 0) return Option.none<ReadonlySet<string>>()
        for (const parent of parents.value) {
          if (parent === stop || seen.has(parent)) continue
          if (!Git.isSha(parent) || seen.size >= limit) return Option.none<ReadonlySet<string>>()
          seen.add(parent)
          next.push(parent)
        }
      }
      frontier = next
    }
    return Option.some<ReadonlySet<string>>(seen)
  })

/** `closedWalk`s of base pushes by repository and old and new tip: the checks one push queues share one walk. */
const pushedWalks = new Map<string, Option.Option<ReadonlySet<string>>>()
const PUSHED_WALKS = 64

/**
 * `compare(repo, base, head)` from an earlier comparison of `earlier.base` with the same head,
 * when it provably has the same merge base — the check of a pull request whose base branch moved
 * forward: `base` descends from `earlier.base` (P, the commits of `earlier.base..base`, found by
 * a walk that closes), and every path from the head to the earlier merge base M stays off P (V,
 * the commits of `M..head`, found by a walk that closes, as many as `earlier.ahead`; none of them
 * in P). Then the common ancestors of the new base and the head are those of the earlier base
 * (P holds none), all of them M or its ancestors (every path from the head meets M), so M is the
 * one merge base; ahead is unchanged and behind grows by P's size. Read through the long-lived
 * reader, no process; none (then `compare`) when anything is not so: a force push, the head in
 * the pushed commits or reaching them, a merge base that is not the only one, a long walk, a
 * shallow or grafted repository (its commits' parents are not git's parents there).
 */
export const compareSince = (
  pool: Readers.BatchPool,
  repo: string,
  earlier: Compared,
  base: string,
  head: string
): Effect.Effect<Option.Option<{ readonly ahead: number; readonly behind: number; readonly mergeBase: string }>> =>
  Effect.gen(function* () {
    if (
      earlier.head !== head ||
      !Git.isSha(earlier.base) ||
      !Git.isSha(earlier.mergeBase) ||
      !Git.isSha(base) ||
      !Git.isSha(head) ||
      earlier.ahead > HEAD_LIMIT ||
      existsSync(join(repo, "shallow")) ||
      existsSync(join(repo, "info", "grafts"))
    )
      return Option.none()
    const key = `${Git.identityOf(repo)}\0${repo}\0${earlier.base}\0${base}`
    let pushed = pushedWalks.get(key)
    if (pushed === undefined) {
      pushed = yield* closedWalk(pool, repo, base, earlier.base, PUSHED_LIMIT)
      if (pushedWalks.size >= PUSHED_WALKS) pushedWalks.delete(pushedWalks.keys().next().value!)
      pushedWalks.set(key, pushed)
    }
    if (Option.isNone(pushed)) return Option.none()
    const own = yield* closedWalk(pool, repo, head, earlier.mergeBase, HEAD_LIMIT)
    if (Option.isNone(own) || own.value.size !== earlier.ahead) return Option.none()
    for (const sha of own.value) if (pushed.value.has(sha)) return Option.none()
    return Option.some({
      ahead: earlier.ahead,
      behind: earlier.behind + pushed.value.size,
      mergeBase: earlier.mergeBase
    })
  }).pipe(
    // A reader that fails is no answer: `compare` runs git as before.
    Effect.catch(() => Effect.succeedNone)
  )

/** The tree of a commit. */
export const treeOf = (repo: string, commit: string): Effect.Effect<string> =>
  orDie(Effect.map(Git.inRepo(repo, ["rev-parse", "--verify", "--end-of-options", `${commit}^{tree}`]), text))

export type TreeMerge =
  | { readonly _tag: "Clean"; readonly tree: string }
  | { readonly _tag: "Conflict"; readonly files: ReadonlyArray<string> }
  | { readonly _tag: "Unrelated" }

/**
 * Clean merges of two commits computed lately, by repository and commits: a pull request's merge
 * asks for the very merge its mergeability check computed (the base tip and head it checked), and
 * gets the tree the check wrote without starting `merge-tree` again. A merge of two given commits
 * is always the same tree; an entry is used only while its tree is still a loose object on disk
 * (Hearth prunes nothing, and git's own `gc` keeps unreferenced objects for two weeks, far past
 * an entry's ten minutes) in the same repository directory (not one made again at its path).
 */
const recentMerges = new Map<string, { readonly tree: string; readonly at: number }>()
const RECENT_MERGES = 1024
const RECENT_MERGE_MS = 10 * 60_000

const recentKey = (repo: string, ours: string, theirs: string) =>
  Git.isSha(ours) && Git.isSha(theirs) ? `${Git.identityOf(repo)}\0${repo}\0${ours}\0${theirs}` : undefined

const recentTree = (repo: string, key: string | undefined): string | undefined => {
  if (key === undefined) return undefined
  const found = recentMerges.get(key)
  if (found === undefined) return undefined
  if (
    Date.now() - found.at < RECENT_MERGE_MS &&
    existsSync(join(repo, "objects", found.tree.slice(0, 2), found.tree.slice(2)))
  )
    return found.tree
  recentMerges.delete(key)
  return undefined
}

const rememberTree = (key: string | undefined, tree: string) => {
  if (key === undefined || !Git.isSha(tree)) return
  recentMerges.delete(key)
  if (recentMerges.size >= RECENT_MERGES) recentMerges.delete(recentMerges.keys().next().value!)
  recentMerges.set(key, { tree, at: Date.now() })
}

/**
 * The three-way merge of `ours` and `theirs` (their merge base computed by git), as Forgejo's
 * `testPatch` runs it: `merge-tree --write-tree -z --name-only --no-messages`; a clean merge of
 * the same two commits computed lately is not computed again (`recentMerges`).
 */
export const mergeTrees = (repo: string, ours: string, theirs: string): Effect.Effect<TreeMerge> =>
  Effect.gen(function* () {
    const key = recentKey(repo, ours, theirs)
    const known = recentTree(repo, key)
    if (known !== undefined) return { _tag: "Clean", tree: known } as const
    const merged = yield* mergeTreesByGit(repo, ours, theirs)
    if (merged._tag === "Clean") rememberTree(key, merged.tree)
    return merged
  })

const mergeTreesByGit = (repo: string, ours: string, theirs: string): Effect.Effect<TreeMerge> =>
  Effect.gen(function* () {
    const result = yield* Git.inRepo(
      repo,
      ["merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", "--end-of-options", ours, theirs],
      { answerCodes: [1] }
    ).pipe(
      Effect.map((r) => ({ ok: true as const, r })),
      Effect.catchIf(
        (e) => /unrelated histories/.test(e.stderr),
        () => Effect.succeed({ ok: false as const })
      ),
      orDie
    )
    if (!result.ok) return { _tag: "Unrelated" } as const
    const parts = result.r.stdout.toString("utf8").split("\0")
    const tree = parts[0]!.trim()
    if (result.r.exitCode === 0) return { _tag: "Clean", tree } as const
    // After the tree: the conflicted paths, then an empty field before the (suppressed) messages.
    const files: Array<string> = []
    for (const name of parts.slice(1)) {
      if (name === "") break
      if (!files.includes(name)) files.push(name)
    }
    return { _tag: "Conflict", files } as const
  })

/** Whether two trees (or commits' trees) are the same. */
export const sameTree = (repo: string, a: string, b: string): Effect.Effect<boolean> =>
  orDie(
    Effect.map(
      Git.inRepo(repo, ["diff-tree", "--quiet", "--end-of-options", a, b], { answerCodes: [1] }),
      (r) => r.exitCode === 0
    )
  )

const stamp = (who: Signature) => {
  const sign = who.offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(who.offsetMinutes)
  return `@${who.seconds} ${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`
}

/**
 * A commit of `tree` with `parents`, by `author`, committed by `committer`; signed with the
 * instance key when `sign` is given ([repository.signing] MERGES: src/git/Signing.ts). Unsigned,
 * it is written in-process (Write.commitObject: the same bytes as `commit-tree`'s, one process
 * fewer per merge) unless its names or dates are ones git would clean up.
 */
export const commitTree = (repo: string, spec: Write.CommitSpec, sign?: SignOptions): Effect.Effect<string> =>
  Effect.flatMap(
    sign === undefined
      ? Effect.try({
          try: () => Write.commitObject(repo, spec),
          catch: (cause) => new Git.GitError({ args: ["commit-tree"], exitCode: null, stderr: String(cause) })
        }).pipe(orDie)
      : Effect.succeed(undefined),
    (written) => (written !== undefined ? Effect.succeed(written) : commitTreeByGit(repo, spec, sign))
  )

const commitTreeByGit = (repo: string, spec: Write.CommitSpec, sign: SignOptions | undefined): Effect.Effect<string> =>
  orDie(
    Effect.map(
      Git.inRepo(
        repo,
        [
          "commit-tree",
          ...(sign === undefined ? [] : ["-S"]),
          ...spec.parents.flatMap((p) => ["-p", p]),
          "-F",
          "-",
          spec.tree
        ],
        {
          input: spec.message,
          env: {
            ...(sign === undefined ? {} : signingEnv(sign)),
            GIT_AUTHOR_NAME: spec.author.name,
            GIT_AUTHOR_EMAIL: spec.author.email,
            GIT_AUTHOR_DATE: stamp(spec.author),
            GIT_COMMITTER_NAME: spec.committer.name,
            GIT_COMMITTER_EMAIL: spec.committer.email,
            GIT_COMMITTER_DATE: stamp(spec.committer)
          }
        }
      ),
      text
    )
  )

export interface CommitMeta {
  readonly sha: string
  readonly parents: ReadonlyArray<string>
  readonly author: Signature
  readonly message: string
}

const SEPARATOR = "\u0001"

/** The non-merge commits of `base..head`, oldest first, with what a rebase keeps of them. */
export const commitsToReplay = (repo: string, base: string, head: string): Effect.Effect<Array<CommitMeta>> =>
  orDie(
    Effect.map(
      Git.inRepo(repo, [
        "log",
        "--reverse",
        "--no-merges",
        "-z",
        `--format=%H${SEPARATOR}%P${SEPARATOR}%an${SEPARATOR}%ae${SEPARATOR}%at${SEPARATOR}%B`,
        "--end-of-options",
        `${base}..${head}`,
        "--"
      ]),
      (r) =>
        r.stdout
          .toString("utf8")
          .split("\0")
          .filter((record) => record.length > 0)
          .map((record) => {
            const [sha, parents, name, email, seconds, ...message] = record.split(SEPARATOR)
            return {
              sha: sha!.trim(),
              parents: parents!.split(" ").filter((p) => p.length > 0),
              author: { name: name!, email: email!, seconds: Number(seconds), offsetMinutes: 0 },
              message: message.join(SEPARATOR)
            }
          })
    )
  )

export class RebaseConflict extends Data.TaggedError("RebaseConflict")<{
  readonly commit: string
  readonly files: ReadonlyArray<string>
}> {}

/**
 * Replays the non-merge commits of `upstream..head` onto `onto`, each keeping its author and
 * message with `committer` as committer (what `git rebase` does); commits that become empty are
 * dropped, as rebase drops them. Returns the new tip (`onto` when nothing is left).
 */
export const rebase = (
  repo: string,
  spec: { readonly onto: string; readonly upstream: string; readonly head: string; readonly committer: Signature }
): Effect.Effect<string, RebaseConflict> =>
  Effect.gen(function* () {
    let tip = spec.onto
    for (const commit of yield* commitsToReplay(repo, spec.upstream, spec.head)) {
      const parent = commit.parents[0]
      const tipTree = yield* treeOf(repo, tip)
      // The stand-in: the tip's tree on the picked commit's parent (a root commit: no parent,
      // then the merge has no base and every path both sides add conflicts, as for git).
      const standIn = yield* commitTree(repo, {
        tree: tipTree,
        parents: parent === undefined ? [] : [parent],
        message: "rebase",
        author: spec.committer,
        committer: spec.committer
      })
      const merged = yield* mergeTrees(repo, standIn, commit.sha)
      if (merged._tag === "Conflict") return yield* new RebaseConflict({ commit: commit.sha, files: merged.files })
      if (merged._tag === "Unrelated") return yield* new RebaseConflict({ commit: commit.sha, files: [] })
      if (merged.tree === tipTree) continue
      tip = yield* commitTree(repo, {
        tree: merged.tree,
        parents: [tip],
        message: commit.message,
        author: commit.author,
        committer: spec.committer
      })
    }
    return tip
  })

/**
 * Brings the objects of `commit` from the repository at `from` (a fork) into `repo`, no ref
 * moved: what `refs/pull/N/head` and the merge then need there.
 */
export const fetchCommit = (repo: string, from: string, commit: string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const present = yield* Git.inRepo(repo, ["cat-file", "-e", `${commit}^{commit}`], { answerCodes: [1, 128] })
    if (present.exitCode === 0) return
    yield* Git.inRepo(repo, ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--", from, commit])
  }).pipe(orDie)

/** `git diff --shortstat a...b` as numbers (Forgejo's `additions`, `deletions`, `changed_files`). */
export const shortStat = (
  repo: string,
  base: string,
  head: string
): Effect.Effect<{ readonly files: number; readonly additions: number; readonly deletions: number }> =>
  orDie(
    Effect.map(Git.inRepo(repo, ["diff", "--shortstat", "--end-of-options", `${base}...${head}`, "--"]), (r) => {
      const out = text(r)
      const n = (re: RegExp) => Number(re.exec(out)?.[1] ?? 0)
      return {
        files: n(/(\d+) files? changed/),
        additions: n(/(\d+) insertions?\(\+\)/),
        deletions: n(/(\d+) deletions?\(-\)/)
      }
    })
  )

export interface ChangedFile {
  readonly filename: string
  readonly previousFilename: string | undefined
  readonly status: "added" | "deleted" | "renamed" | "copied" | "changed" | "unchanged"
  readonly additions: number
  readonly deletions: number
}

const STATUS: Record<string, ChangedFile["status"]> = { A: "added", D: "deleted", R: "renamed", C: "copied" }

/** The files `base..head` changes, with line counts (Forgejo's ChangedFile), in path order. */
export const changedFiles = (
  repo: string,
  base: string,
  head: string,
  whitespace: ReadonlyArray<string> = []
): Effect.Effect<Array<ChangedFile>> =>
  Effect.gen(function* () {
    const range = ["--end-of-options", base, head, "--"]
    const statusOut = yield* Git.inRepo(repo, ["diff", "-M", "--name-status", "-z", ...whitespace, ...range])
    const numOut = yield* Git.inRepo(repo, ["diff", "-M", "--numstat", "-z", ...whitespace, ...range])
    const counts = new Map<string, { additions: number; deletions: number }>()
    const nums = numOut.stdout.toString("utf8").split("\0")
    for (let i = 0; i < nums.length; i++) {
      const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(nums[i]!)
      if (match === null) continue
      let path = match[3]!
      if (path === "") {
        i += 2 // a rename: old and new paths follow
        path = nums[i] ?? ""
      }
      counts.set(path, {
        additions: match[1] === "-" ? 0 : Number(match[1]),
        deletions: match[2] === "-" ? 0 : Number(match[2])
      })
    }
    const files: Array<ChangedFile> = []
    const tokens = statusOut.stdout.toString("utf8").split("\0")
    for (let i = 0; i < tokens.length; i++) {
      const code = tokens[i]!
      if (code === "") continue
      const kind = code[0]!
      let previous: string | undefined
      let filename = tokens[++i] ?? ""
      if (kind === "R" || kind === "C") {
        previous = filename
        filename = tokens[++i] ?? ""
      }
      const count = counts.get(filename) ?? { additions: 0, deletions: 0 }
      const status = STATUS[kind] ?? (count.additions + count.deletions === 0 && kind === "M" ? "unchanged" : "changed")
      files.push({ filename, previousFilename: kind === "R" ? previous : undefined, status, ...count })
    }
    return files
  }).pipe(orDie)
