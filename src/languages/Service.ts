// A repository's languages (Forgejo's `GetLanguageStats`): bytes per language of the default
// branch's tree. Forgejo computes them after each push into a table; Hearth computes them on the
// first request and keeps them per repository, valid while the repository row is unchanged (every
// push and API commit touches its `updated_at` through `recordGitChange`) and, past that, while the
// branch still points at the same commit.
import { Context, Effect, Layer, Option } from "effect"
import * as Git from "../git/Git.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { languageStats } from "./Detect.ts"

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
  }
>()("hearth/languages/LanguagesService") {
  static readonly layer = Layer.sync(LanguagesService, () => {
    const cache = new Map<number, Cached>()
    const remember = (repoId: number, entry: Cached) => {
      cache.delete(repoId)
      cache.set(repoId, entry)
      if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
    }
    return LanguagesService.of({
      of: (repo, path) =>
        Effect.gen(function* () {
          const updatedAt = repo.updatedAt.getTime()
          const branch = repo.defaultBranch
          const cached = cache.get(repo.id)
          if (cached !== undefined && cached.updatedAt === updatedAt && cached.branch === branch) return cached.stats
          if (repo.isEmpty) return {}
          const head = yield* Git.revParse(path, `refs/heads/${branch}^{commit}`).pipe(
            Effect.catch(() => Effect.succeedNone)
          )
          if (Option.isNone(head)) return {}
          const stats =
            cached !== undefined && cached.commit === head.value && cached.branch === branch
              ? cached.stats
              : languageStats(yield* treeFiles(path, head.value))
          remember(repo.id, { updatedAt, branch, commit: head.value, stats })
          return stats
        })
    })
  })
}
