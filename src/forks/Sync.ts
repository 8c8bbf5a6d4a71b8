// Syncing a fork's branch with the same branch of the repository it was forked from (Forgejo's
// services/repository/sync_fork.go): allowed when the fork's branch is behind and never diverged —
// its commit is in the base branch's history — so the sync is a fast-forward. The commits are
// fetched into the fork through its Repository entity (a fork that moved meanwhile refuses the
// non-fast-forward fetch), after the quota and the branch protection a commit through the API
// meets (Forgejo pushes, so its hooks check the same), then published as a push.
import { Context, Effect, Layer, Option } from "effect"
import { pushed } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { RepositoryWriter, toApiError } from "../git/Repository.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { ProtectionService } from "../protection/Service.ts"
import { QuotaService } from "../quota/Service.ts"
import { type OpenedRepository, RepoPolicy } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { UsersRepo } from "../users/Repo.ts"

/** Forgejo's SyncForkInfo. */
export interface SyncForkInfo {
  readonly allowed: boolean
  readonly fork_commit: string
  readonly base_commit: string
  readonly commits_behind: number
}

const NOTHING: SyncForkInfo = { allowed: false, fork_commit: "", base_commit: "", commits_behind: 0 }

export class ForkSync extends Context.Service<
  ForkSync,
  {
    /** What syncing `branch` would do; 404 when the fork has no such branch. */
    readonly info: (
      caller: Principal | undefined,
      fork: OpenedRepository,
      branch: string
    ) => Effect.Effect<SyncForkInfo, Errors.NotFound>
    /** Fast-forwards `branch` to the base's; 400 when that is not allowed. */
    readonly sync: (
      caller: Principal,
      fork: OpenedRepository,
      branch: string
    ) => Effect.Effect<void, Errors.NotFound | Errors.BadRequest | Errors.Forbidden | Errors.ApiError>
  }
>()("hearth/forks/ForkSync") {
  static readonly layer = Layer.effect(
    ForkSync,
    Effect.gen(function* () {
      const repos = yield* ReposRepo
      const repoService = yield* ReposService
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const writer = yield* RepositoryWriter
      const protection = yield* ProtectionService
      const quota = yield* QuotaService
      const events = yield* EventHub

      const branchSha = (dir: string, branch: string) => Effect.orDie(Git.revParse(dir, `refs/heads/${branch}`))

      /** The base repository, as the caller may see it (a base hidden from the caller is no base). */
      const baseOf = (caller: Principal | undefined, fork: OpenedRepository) =>
        Effect.gen(function* () {
          if (!fork.repo.isFork || fork.repo.forkId === null || fork.repo.isArchived) return undefined
          const repo = yield* repos.findById(fork.repo.forkId)
          if (Option.isNone(repo)) return undefined
          const owner = yield* users.findById(repo.value.ownerId)
          if (Option.isNone(owner)) return undefined
          const access = yield* policy.access(caller, repo.value, owner.value)
          if (access.mode === "none") return undefined
          return { repo: repo.value, owner: owner.value, dir: repoService.pathOf(owner.value, repo.value) }
        })

      const info = (caller: Principal | undefined, fork: OpenedRepository, branch: string) =>
        Effect.gen(function* () {
          // Forgejo's order: no fork (or an archived one) has nothing to sync, whatever the branch.
          const base = yield* baseOf(caller, fork)
          if (base === undefined) return { found: NOTHING, base }
          const forkSha = yield* branchSha(fork.path, branch)
          if (Option.isNone(forkSha)) return yield* Errors.notFound()
          const found = { ...NOTHING, fork_commit: forkSha.value }
          const baseSha = yield* branchSha(base.dir, branch)
          if (Option.isNone(baseSha)) return { found, base }
          const both = { ...found, base_commit: baseSha.value }
          if (baseSha.value === forkSha.value) return { found: both, base }
          // The fork's commit must be in the base branch's history (unknown to the base: diverged).
          const ancestor = yield* Effect.orDie(
            Git.inRepo(base.dir, ["merge-base", "--is-ancestor", forkSha.value, baseSha.value], {
              answerCodes: [1, 128]
            })
          )
          if (ancestor.exitCode !== 0) return { found: both, base }
          const behind = yield* Effect.orDie(
            Git.inRepo(base.dir, ["rev-list", "--count", `${forkSha.value}..${baseSha.value}`])
          )
          const commitsBehind = Number(behind.stdout.toString("utf8").trim())
          return { found: { ...both, allowed: true, commits_behind: commitsBehind }, base }
        })

      return ForkSync.of({
        info: (caller, fork, branch) => Effect.map(info(caller, fork, branch), (r) => r.found),
        sync: (caller, fork, branch) =>
          Effect.gen(function* () {
            const { found, base } = yield* info(caller, fork, branch)
            if (!found.allowed || base === undefined) return yield* Errors.badRequest("You can't sync this branch")
            yield* quota.enforce(fork.owner, "size:repos:all")
            const changed = yield* Effect.orDie(
              Git.inRepo(base.dir, ["diff", "--name-only", "-z", found.fork_commit, found.base_commit])
            )
            const paths = changed.stdout
              .toString("utf8")
              .split("\0")
              .filter((p) => p !== "")
            // A fast-forward to the upstream's commits: nothing Hearth signs.
            yield* protection.checkCommit(fork, caller.user, branch, paths, false)
            const ref = `refs/heads/${branch}`
            yield* writer
              .fetchFrom(
                { id: fork.repo.id, dir: fork.path },
                { url: base.dir, config: [], prune: false, setHead: false, refspecs: [`${ref}:${ref}`] }
              )
              .pipe(Effect.mapError(toApiError))
            yield* events.publish(
              pushed(fork.owner, fork.repo, caller.user, "api", [
                { ref, before: found.fork_commit, after: found.base_commit }
              ])
            )
          })
      })
    })
  )
}
