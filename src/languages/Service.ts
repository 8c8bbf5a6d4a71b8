// A repository's languages (Forgejo's `GetLanguageStats`): bytes per language of the default
// branch's tree. Forgejo's stats indexer counts them after each push into a table; Hearth counts
// them after each git change (`refresh`, from `recordGitChange`) or on the first request, keeps
// them in memory per repository, valid while the repository row is unchanged (every push and API
// commit touches its `updated_at`) and, past that, while the branch still points at the same
// commit, and records the primary language (the largest) on the row for the Repository JSON.
import { Context, Effect, Layer, Option } from "effect"
import * as Git from "../git/Git.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { languageStats } from "./Detect.ts"
import { LanguagesRepo } from "./Repo.ts"

export type LanguageStats = Readonly<Record<string, number>>

interface Cached {
  readonly updatedAt: number
  readonly branch: string
  readonly commit: string
  readonly stats: LanguageStats
}

/** Repositories whose languages are kept in memory; the oldest entry goes first. */
const CACHE_SIZE = 1000

/**
 * Regular files (not symlinks, not submodules) of `commit` with their sizes, from
 * `git ls-tree -r -l -z`: `<mode> <type> <object> <size>\t<path>` records.
 */
const treeFiles = (path: string, commit: string) =>
  Effect.map(
    Effect.orDie(Git.inRepo(path, ["ls-tree", "-r", "-l", "-z", "--full-tree", "--end-of-options", commit])),
    (out) =>
      out.stdout
        .toString("utf8")
        .split("\0")
        .flatMap((record) => {
          const tab = record.indexOf("\t")
          if (tab === -1) return []
          const [mode, type, , size] = record.slice(0, tab).split(/ +/)
          if (type !== "blob" || (mode !== "100644" && mode !== "100755")) return []
          return [{ path: record.slice(tab + 1), size: Number(size) || 0 }]
        })
  )

export class LanguagesService extends Context.Service<
  LanguagesService,
  {
    /** Bytes per language of the default branch of `repo` (stored at `path`); `{}` when empty. */
    readonly of: (repo: RepoRow, path: string) => Effect.Effect<LanguageStats>
    /** Counts them again if the branch moved (after a git change), recording the primary language. */
    readonly refresh: (repo: RepoRow, path: string) => Effect.Effect<void>
  }
>()("hearth/languages/LanguagesService") {
  static readonly layer = Layer.effect(
    LanguagesService,
    Effect.gen(function* () {
      const rows = yield* LanguagesRepo
      const cache = new Map<number, Cached>()
      /** Repositories being counted by `refresh`, with the change that came in meanwhile. */
      const refreshing = new Map<number, { readonly repo: RepoRow; readonly path: string } | undefined>()
      const remember = (repoId: number, entry: Cached) => {
        cache.delete(repoId)
        cache.set(repoId, entry)
        if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
      }
      /** The largest language (the first by name on a tie), "" when there is none. */
      const primaryOf = (stats: LanguageStats) =>
        Object.entries(stats).reduce<[string, number]>((top, entry) => (entry[1] > top[1] ? entry : top), ["", 0])[0]

      /** The stats at the branch's head: the cached ones while it has not moved, else counted now. */
      const count = (repo: RepoRow, path: string) =>
        Effect.gen(function* () {
          const branch = repo.defaultBranch
          const cached = cache.get(repo.id)
          const head = repo.isEmpty
            ? Option.none<string>()
            : yield* Git.revParse(path, `refs/heads/${branch}^{commit}`).pipe(Effect.catch(() => Effect.succeedNone))
          if (Option.isNone(head)) {
            yield* rows.setPrimary(repo.id, "")
            cache.delete(repo.id)
            return {}
          }
          if (cached !== undefined && cached.commit === head.value && cached.branch === branch) {
            remember(repo.id, { ...cached, updatedAt: repo.updatedAt.getTime() })
            return cached.stats
          }
          const stats = languageStats(yield* treeFiles(path, head.value))
          yield* rows.setPrimary(repo.id, primaryOf(stats))
          remember(repo.id, { updatedAt: repo.updatedAt.getTime(), branch, commit: head.value, stats })
          return stats
        })

      return LanguagesService.of({
        of: (repo, path) => {
          const cached = cache.get(repo.id)
          return cached !== undefined &&
            cached.updatedAt === repo.updatedAt.getTime() &&
            cached.branch === repo.defaultBranch
            ? Effect.succeed(cached.stats)
            : count(repo, path)
        },
        // One count at a time per repository: changes arriving meanwhile (a burst of API commits)
        // leave only their latest state, counted once the running count is done.
        refresh: (repo, path) =>
          Effect.suspend(() => {
            if (refreshing.has(repo.id)) {
              refreshing.set(repo.id, { repo, path })
              return Effect.void
            }
            refreshing.set(repo.id, undefined)
            return Effect.gen(function* () {
              let next: { readonly repo: RepoRow; readonly path: string } | undefined = { repo, path }
              while (next !== undefined) {
                yield* count(next.repo, next.path)
                next = refreshing.get(repo.id)
                refreshing.set(repo.id, undefined)
              }
            }).pipe(Effect.ensuring(Effect.sync(() => refreshing.delete(repo.id))))
          })
      })
    })
  )
}
