// Git smart HTTP for hosted repositories, at {ROOT_URL}{owner}/{repo}.git: who may fetch or push
// (the same access rules as the API, credentials by HTTP Basic as git sends them), and what the
// database learns after a push.

import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { callerRefusal } from "../auth/AccountState.ts"
import { parseAuthorization } from "../auth/Authentication.ts"
import { Authenticator } from "../auth/Authenticator.ts"
import { Settings } from "../config/Settings.ts"
import { doerOf, pushEvent, repositoryRef } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import { installProcReceiveHook } from "../git/ProcReceive.ts"
import { installPushLogHook, newPushLog, pushLogDir, takePushLog } from "../git/PushLog.ts"
import { installRefusingHook } from "../git/Refusal.ts"
import { RepositoryWriter } from "../git/Repository.ts"
import * as SmartHttp from "../git/SmartHttp.ts"
import type { Principal } from "../http/Caller.ts"
import { RepositoryMoved } from "../http/Errors.ts"
import { PushGate } from "../protection/Push.ts"
import { AgitReceiver } from "../pulls/Agit.ts"
import { QuotaService } from "../quota/Service.ts"
import { UsersService } from "../users/Service.ts"
import { wikiRef } from "../wiki/Location.ts"
import { isWikiPushHeader, wikiPushEvents } from "../wiki/Push.ts"
import { BEING_CREATED, type RepoAccess, RepoPolicy, repoRefusal } from "./Policy.ts"
import { ReposService } from "./Service.ts"

const DEPLOY_READ: RepoAccess = { mode: "read", code: "read" }
const DEPLOY_WRITE: RepoAccess = { mode: "write", code: "write" }

/** A deploy key's grant on one repository (git over SSH). */
export interface DeployGrant {
  readonly repoId: number
  readonly readOnly: boolean
}

/**
 * Who may fetch from or push to a hosted repository, and what the database learns after a push:
 * shared by smart HTTP (below) and the SSH server (src/ssh), so both apply the same rules.
 */
export const makeGitAccess = Effect.gen(function* () {
  const users = yield* UsersService
  const repos = yield* ReposService
  const policy = yield* RepoPolicy
  const events = yield* EventHub
  const quota = yield* QuotaService
  const settings = yield* Settings
  const gate = yield* PushGate
  const writer = yield* RepositoryWriter
  const agit = yield* AgitReceiver
  // The hooks of every push (one directory for every repository): the one that refuses pushes over
  // quota, the one that reports the refs a push moved (src/git/PushLog.ts), and the one that turns
  // a push to refs/for/… into a pull request (src/git/ProcReceive.ts).
  const hooks = yield* Effect.sync(() =>
    installProcReceiveHook(
      installPushLogHook(installRefusingHook(join(settings.server.APP_DATA_PATH, "hooks", "push")))
    )
  )
  const pushLogs = pushLogDir(settings.server.APP_DATA_PATH)

  /**
   * The repository's path for `level`, or why not. A deploy key (`deploy`) reaches only the
   * repositories it is on, and writes only where it is read-write; `moved` answers a renamed or
   * transferred repository (HTTP redirects; SSH says where it went). `env` is for git: set when a
   * push is to be refused by quota, before any ref changes, with a message git shows the pusher.
   */
  const check = (
    caller: Principal | undefined,
    ownerName: string,
    repoName: string,
    level: "read" | "write",
    options: {
      readonly deploy?: ReadonlyArray<DeployGrant> | undefined
      readonly moved?: ((moved: RepositoryMoved) => SmartHttp.Denied) | undefined
      /** How a push arrives (what its event says). */
      readonly via?: "http" | "ssh"
    } = {}
  ) =>
    Effect.gen(function* () {
      // `{repo}.wiki` is the repository's wiki (no repository may end in `.wiki`, lib/Names.ts):
      // the same rules on the wiki unit, its own directory (src/wiki/Location.ts).
      const wiki = /\.wiki$/i.test(repoName)
      const name = wiki ? repoName.slice(0, -".wiki".length) : repoName
      const movedWiki = (moved: RepositoryMoved) =>
        new RepositoryMoved({
          from: { owner: moved.from.owner, name: `${moved.from.name}.wiki` },
          to: { owner: moved.to.owner, name: `${moved.to.name}.wiki` }
        })
      // The API's rules, in the API's order: the account and the token's `repository` scope at
      // the operation's level first (Forgejo's githttp.go checks scope and account state too).
      if (caller !== undefined) {
        const refused = callerRefusal(caller, level, ["repository"], settings.server.ROOT_URL)
        if (refused !== undefined) return yield* SmartHttp.Denied.forbidden(refused)
      }
      const notFound = SmartHttp.Denied.notFound()
      // A renamed or transferred repository, or one of a renamed account (an unknown owner name).
      const redirected = Effect.flatMap(repos.redirectFor(caller, ownerName, name), (moved) =>
        Effect.fail(
          Option.isSome(moved) && options.moved !== undefined
            ? options.moved(wiki ? movedWiki(moved.value) : moved.value)
            : notFound
        )
      )
      const owner = yield* users.get(ownerName).pipe(Effect.catch(() => redirected))
      const repo = yield* repos.get(owner, name).pipe(Effect.catch(() => redirected))
      // A deploy key reaches only the repositories it is on, at its own level; anyone else at theirs.
      let access: RepoAccess
      if (options.deploy !== undefined) {
        const grant = options.deploy.find((g) => g.repoId === repo.id)
        if (grant === undefined) return yield* notFound
        if (level === "write" && grant.readOnly)
          return yield* SmartHttp.Denied.forbidden("this deploy key is read-only")
        access = grant.readOnly ? DEPLOY_READ : DEPLOY_WRITE
      } else {
        access = yield* policy.access(caller, repo, owner)
      }
      // Then the API's rule (Policy.ts `repoRefusal`) on the code unit, in git's words: anonymous
      // callers are asked to sign in instead of being refused (git then asks for credentials); a
      // caller who sees the repository but not its code is answered as if it were not there.
      const asked = repoRefusal(
        options.deploy === undefined ? caller : undefined,
        { owner, repo, access },
        { role: level, unit: wiki ? "wiki" : "code", changes: level === "write" ? "content" : undefined }
      )
      // AGit: a user who may read the code and the pull requests but not write may still push, as
      // in Forgejo (which delays the write check to its pre-receive hook): the hook refuses every
      // ref but refs/for/…, which opens a pull request (src/pulls/Agit.ts).
      const pullsOnly =
        asked?.kind === "role" &&
        level === "write" &&
        !wiki &&
        options.deploy === undefined &&
        caller !== undefined &&
        repoRefusal(caller, { owner, repo, access }, { role: "read", unit: "pulls" }) === undefined
      const refused = pullsOnly
        ? repoRefusal(caller, { owner, repo, access }, { role: "read", unit: "code", changes: "content" })
        : asked
      if (refused !== undefined && refused.kind !== "creating") {
        if (caller === undefined && options.deploy === undefined) return yield* SmartHttp.Denied.unauthorized()
        switch (refused.kind) {
          case "archived":
            return yield* SmartHttp.Denied.forbidden("this repository is archived: it accepts no pushes")
          case "mirror":
            return yield* SmartHttp.Denied.forbidden("mirror repository is read-only")
          case "role":
            if (level === "read") return yield* notFound
            return yield* SmartHttp.Denied.forbidden(refused.message)
          case "public-only":
            return yield* SmartHttp.Denied.forbidden(refused.message)
          default:
            return yield* notFound
        }
      }
      let path = repos.pathOf(owner, repo)
      if (wiki) {
        // The wiki is made on its first use, by git as by the API (Forgejo's InitWiki), by someone
        // who may write it: a reader's clone of a wiki that has no pages yet makes nothing.
        const ref = wikiRef(repo.id, path)
        path = ref.dir
        if (!existsSync(path)) {
          const writable =
            repoRefusal(
              options.deploy === undefined ? caller : undefined,
              { owner, repo, access },
              {
                role: "write",
                unit: "wiki"
              }
            ) === undefined
          // An anonymous clone is asked to sign in (git then sends the credentials it has).
          if (!writable && caller === undefined && options.deploy === undefined)
            return yield* SmartHttp.Denied.unauthorized()
          if (!writable) return yield* SmartHttp.Denied.notFound("this wiki has no pages yet")
          yield* writer.init(ref, repo.defaultBranch).pipe(Effect.mapError(() => SmartHttp.Denied.notFound()))
        }
      }
      if (level === "read") return { path, owner, repo, env: undefined, pushLog: undefined }
      // A push while a job still makes the git data (the rule's `creating`) is refused by the hook,
      // before any ref moves, with the message git shows the pusher.
      const refusal =
        repo.status === "creating"
          ? BEING_CREATED
          : wiki
            ? yield* wikiPushRefusal(owner)
            : yield* quota.pushRefusal(owner)
      // A deploy key pushes as the repository's owner (Forgejo: the doer of a deploy key's push).
      const log = newPushLog(hooks, pushLogs, {
        repo: repositoryRef(owner, repo),
        doer: doerOf(caller?.user ?? owner),
        via: options.via ?? "http",
        ...(wiki ? { wiki: true, dir: path } : {})
      })
      // Branch and tag protection is decided per ref by the pre-receive hook (src/protection/Push.ts);
      // a wiki has no protection rules.
      const pusher = options.deploy === undefined ? caller?.user : undefined
      const gated = wiki
        ? log.env
        : {
            ...log.env,
            ...(yield* gate.envFor(repo, pusher)),
            ...agit.envFor(repo, pusher),
            ...(pullsOnly && pusher !== undefined
              ? { HEARTH_PUSH_READER: pusher.name, HEARTH_PUSH_REPO: `${owner.name}/${repo.name}` }
              : {})
          }
      const env = refusal === undefined ? gated : { ...gated, HEARTH_PUSH_REFUSED: refusal }
      return { path, owner, repo, env, pushLog: log.file }
    })

  /** Why a push to `owner`'s wiki is refused by quota (`size:assets:wiki`), if it is. */
  const wikiPushRefusal = (owner: { readonly id: number; readonly name: string }) =>
    Effect.map(quota.allows(owner.id, "size:assets:wiki"), (ok) =>
      ok
        ? undefined
        : `Hearth: quota exceeded: ${owner.name} may not store more wiki data (size:assets:wiki); ` +
          "pushes that only delete branches or tags are still accepted"
    )

  // After a push: the refs it moved (its push log) published as one event; the subscribers record
  // what the database knows, queue push mirrors and tell the fediverse (src/events).
  const onPushed = (pushLog: string | undefined) =>
    Effect.gen(function* () {
      if (pushLog === undefined) return
      const log = yield* Effect.promise(() => takePushLog(pushLog))
      // A wiki's push: the pages it changed (src/wiki/Push.ts).
      if (log !== undefined && isWikiPushHeader(log.header)) {
        const header = log.header as typeof log.header & { readonly dir?: unknown }
        if (typeof header.dir !== "string") return
        const changed = yield* wikiPushEvents(header.dir, log.header, log.refs)
        for (const event of changed) yield* events.publish(event)
        return
      }
      const event = log === undefined ? undefined : pushEvent(log.header, log.refs)
      if (event !== undefined) yield* events.publish(event)
    }).pipe(Effect.ignoreCause({ log: "Warn", message: "could not publish a push" }))

  return { check, onPushed }
})

export const GitHttpRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    const authenticator = yield* Authenticator
    const { check, onPushed } = yield* makeGitAccess

    /** The caller from `Authorization` (Basic with a password or token, or `token X`); none if absent. */
    const callerOf = (request: HttpServerRequest.HttpServerRequest) => {
      const credentials = parseAuthorization(request.headers["authorization"])
      const resolved =
        credentials.kind === "none"
          ? Effect.succeed(undefined)
          : credentials.kind === "token"
            ? authenticator.byToken(credentials.token)
            : authenticator.byBasic(
                credentials.username,
                credentials.password,
                request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined,
                { passwordWithTwoFactor: "refuse" }
              )
      return Effect.mapError(resolved, (e) => SmartHttp.Denied.unauthorized(e.message))
    }

    const resolve: SmartHttp.Resolver = (ownerName, repoName, service, request) =>
      Effect.gen(function* () {
        const level = service === "receive-pack" ? "write" : "read"
        const caller = yield* callerOf(request)
        // As the API refuses anonymous callers under [service] REQUIRE_SIGNIN_VIEW, git asks them to
        // sign in, even for a public repository (Forgejo's httpBase: askAuth).
        if (caller === undefined && settings.service.REQUIRE_SIGNIN_VIEW) return yield* SmartHttp.Denied.unauthorized()
        const found = yield* check(caller, ownerName, repoName, level, {
          moved: (moved) =>
            SmartHttp.Denied.moved(new URL(moved.relocate(request.url), settings.server.ROOT_URL).toString())
        })
        return { path: found.path, pusher: caller?.user.name, env: found.env, pushLog: found.pushLog }
      })

    return SmartHttp.layer({ resolve, onPushed: (_owner, _repo, _pusher, pushLog) => onPushed(pushLog) })
  })
)
