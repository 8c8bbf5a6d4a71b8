// Branch and tag protection on git pushes over HTTP and SSH: the push's pre-receive hook asks this
// gate (through src/git/Hook.ts) about the refs it moves, and prints the refusal as
// `remote: Hearth: <Forgejo's message>`. The gate is started with the server and serves every push.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Option } from "effect"
import { type HookServer, startHookServer } from "../git/Hook.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ProtectionRepo } from "./Repo.ts"
import { ProtectionService } from "./Service.ts"

/** What a push's session says: the repository, and who pushes (a user id, or a deploy key). */
interface Session {
  readonly repoId: number
  readonly userId: number | null
}

const curlInstalled = () =>
  (process.env.PATH ?? "").split(":").some((dir) => dir !== "" && existsSync(join(dir, "curl")))

export class PushGate extends Context.Service<
  PushGate,
  {
    /**
     * The environment for `git receive-pack`: the default branch (which the hook refuses to
     * delete) and, in a repository with protection rules, what makes the hook ask the gate (the
     * pusher: a user, or undefined for a deploy key). A repository without rules costs its pushes
     * nothing more; a rule made while a push is already under way applies from the next push.
     */
    readonly envFor: (repo: RepoRow, pusher: UserRow | undefined) => Effect.Effect<Record<string, string>>
  }
>()("hearth/protection/PushGate") {
  static readonly layer = Layer.effect(
    PushGate,
    Effect.gen(function* () {
      const protection = yield* ProtectionService
      const reposRepo = yield* ReposRepo
      const repos = yield* ReposService
      const users = yield* UsersRepo
      const protectionRepo = yield* ProtectionRepo
      const context = yield* Effect.context<never>()
      // The pre-receive hook asks this server with curl: without it, pushes to repositories with
      // protection rules are refused (the hook says why), so say it once at start as well.
      if (!curlInstalled()) {
        yield* Effect.logWarning(
          "curl is not installed: pushes to repositories with branch or tag protection rules will be refused until it is (apt-get install curl)"
        )
      }

      const decide = Effect.fn("PushGate.decide")(function* (
        session: Session,
        refs: ReadonlyArray<{ oldSha: string; newSha: string; ref: string }>,
        gitEnv: (path: string) => Record<string, string>
      ) {
        const repo = yield* reposRepo.findById(session.repoId)
        if (Option.isNone(repo)) return "the repository no longer exists"
        const owner = yield* users.findById(repo.value.ownerId)
        if (Option.isNone(owner)) return "the repository no longer exists"
        const at = { owner: owner.value, repo: repo.value }
        let pusher: { kind: "user"; user: UserRow } | { kind: "deploy" } = { kind: "deploy" }
        if (session.userId !== null) {
          const user = yield* users.findById(session.userId)
          if (Option.isNone(user)) return "the pushing account no longer exists"
          pusher = { kind: "user", user: user.value }
        }
        return yield* protection.checkPush(at, pusher, refs, gitEnv(repos.pathOf(owner.value, repo.value)))
      })

      const server: HookServer<Session> = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startHookServer<Session>(({ session, refs, gitEnv }) =>
            Effect.runPromiseWith(context)(decide(session, refs, gitEnv))
          )
        ),
        (started) => Effect.promise(() => started.close())
      )
      return PushGate.of({
        envFor: (repo, pusher) =>
          Effect.map(protectionRepo.hasRules(repo.id), (has) => ({
            HEARTH_DEFAULT_BRANCH: repo.defaultBranch,
            ...(has ? server.envFor({ repoId: repo.id, userId: pusher?.id ?? null }) : {})
          }))
      })
    })
  )
}
