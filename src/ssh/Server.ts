// The built-in SSH server for git (`[server] START_SSH_SERVER`): public-key authentication by
// registered user keys and deploy keys, then `git-upload-pack`, `git-receive-pack` or
// `git-upload-archive` on `owner/repo.git` with the same access rules as smart HTTP
// (src/repos/GitHttp.ts `makeGitAccess`). Anything else (a shell, another command) is refused.

import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer, Option } from "effect"
import ssh2 from "ssh2"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import { Denied } from "../git/SmartHttp.ts"
import type { GitChild } from "../git/Spawner.ts"
import type { Principal } from "../http/Caller.ts"
import type { RepositoryMoved } from "../http/Errors.ts"
import { fingerprintOf } from "../keys/Parse.ts"
import { type KeyIdentity, KeysService } from "../keys/Service.ts"
import { makeGitAccess } from "../repos/GitHttp.ts"
import { generateEd25519 } from "./HostKey.ts"

const { Server, utils } = ssh2

export type GitCommand = "upload-pack" | "receive-pack" | "upload-archive"

/**
 * Reads the command git sends: `git-upload-pack '/owner/repo.git'` (also `git upload-pack`,
 * without the slash, the quotes or `.git`). `undefined` for anything else.
 */
export const parseGitCommand = (command: string): { service: GitCommand; owner: string; repo: string } | undefined => {
  const match = /^git[- ](upload-pack|receive-pack|upload-archive)\s+(.+)$/.exec(command.trim())
  if (match === null) return undefined
  let path = match[2]!.trim()
  const quote = path[0]
  if ((quote === "'" || quote === '"') && path.endsWith(quote) && path.length >= 2) path = path.slice(1, -1)
  path = path.replace(/^\/+/, "").replace(/\/+$/, "")
  const parts = path.split("/")
  if (parts.length !== 2 || parts.some((p) => p === "" || p === "." || p === "..")) return undefined
  const repo = parts[1]!.endsWith(".git") ? parts[1]!.slice(0, -4) : parts[1]!
  if (repo === "") return undefined
  return { service: match[1] as GitCommand, owner: parts[0]!, repo }
}

/** The ed25519 host key under APP_DATA_PATH/ssh: generated on the first start, reused afterwards. */
export const hostKey = (dataPath: string): string => {
  const dir = join(dataPath, "ssh")
  const file = join(dir, "hearth_host_ed25519_key")
  if (existsSync(file)) return readFileSync(file, "utf8")
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const pair = generateEd25519("hearth host key")
  writeFileSync(file, pair.private, { mode: 0o600, flag: "wx" })
  writeFileSync(`${file}.pub`, `${pair.public}\n`, { mode: 0o644 })
  chmodSync(file, 0o600)
  return pair.private
}

// A client may offer a few keys (ssh tries each in the agent); more than this is not a git client.
const MAX_AUTH_ATTEMPTS = 10
// A connection that has not authenticated by then is closed (as sshd's LoginGraceTime).
const LOGIN_GRACE_MS = 120_000
const SHELL_REFUSED =
  "Hi there! You've successfully authenticated, but Hearth does not provide shell access.\n" +
  "Use git with an address such as ssh://git@host/owner/repo.git.\n"

export const SshServerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.server.START_SSH_SERVER) return
    const keys = yield* KeysService
    const access = yield* makeGitAccess
    const context = yield* Effect.context<never>()
    const run = <A>(effect: Effect.Effect<A>) => Effect.runPromiseWith(context)(effect)
    const sshUser = settings.server.BUILTIN_SSH_SERVER_USER
    const host = settings.server.SSH_LISTEN_HOST
    const port = settings.server.SSH_LISTEN_PORT

    const key = yield* Effect.try({
      try: () => hostKey(settings.server.APP_DATA_PATH),
      catch: (e) =>
        new Error(`cannot create the SSH host key under ${settings.server.APP_DATA_PATH}/ssh: ${(e as Error).message}`)
    }).pipe(Effect.orDie)

    /** Runs one git command for an authenticated key on an accepted channel. */
    const exec = (identity: KeyIdentity, command: string, env: Record<string, string>, channel: ssh2.ServerChannel) => {
      const fail = (message: string) => {
        channel.stderr.write(`Hearth: ${message}\n`)
        channel.exit(1)
        channel.end()
      }
      let closed = false
      channel.on("close", () => (closed = true))
      const parsed = parseGitCommand(command)
      if (parsed === undefined)
        return fail(
          `"${command.slice(0, 200)}" is not a git command this server runs; only git-upload-pack, git-receive-pack and git-upload-archive on owner/repo.git`
        )
      const level = parsed.service === "receive-pack" ? "write" : "read"
      const caller: Principal | undefined =
        identity.kind === "user"
          ? // A key proves the account as a password would: no token scopes apply.
            { user: identity.user, scopes: undefined, method: "password" }
          : undefined
      const deploy =
        identity.kind === "deploy"
          ? identity.deployments.map((d) => ({ repoId: d.repoId, readOnly: d.readOnly }))
          : undefined
      // A renamed or transferred repository answers at its new name, as Forgejo's serv does.
      const moved = (to: RepositoryMoved) => new Denied({ reason: "moved", message: `${to.to.owner}/${to.to.name}` })
      const checked = access.check(caller, parsed.owner, parsed.repo, level, { deploy, moved, via: "ssh" }).pipe(
        Effect.catchIf(
          (d) => d.reason === "moved",
          (d) => {
            const [owner, repo] = (d.message ?? "").split("/")
            return access.check(caller, owner ?? "", repo ?? "", level, { deploy, via: "ssh" })
          }
        )
      )
      /** git for the granted repository, on the channel; a push records itself once git is done. */
      const serveGit = (child: GitChild, granted: { readonly pushLog: string | undefined }) => {
        if (closed) return void child.kill()
        channel.pipe(child.stdin)
        child.stdout.pipe(channel, { end: false })
        child.stderr.pipe(channel.stderr, { end: false })
        child.stdin.on("error", () => {})
        // The client went away: stop git (a push that did not finish changes nothing).
        channel.on("close", () => {
          if (child.exitCode === null) child.kill()
        })
        child.on("error", (e) => fail(`could not run git: ${e.message}`))
        child.on("close", (code) => {
          const done = () => {
            channel.exit(code ?? 1)
            channel.end()
          }
          if (parsed.service === "receive-pack" && code === 0) {
            void run(access.onPushed(granted.pushLog)).finally(done)
          } else {
            done()
          }
        })
      }
      void run(Effect.result(checked)).then(
        (result) => {
          if (result._tag === "Failure") {
            const denied = result.failure
            const message =
              denied.reason === "not-found"
                ? `repository ${parsed.owner}/${parsed.repo} does not exist, or you do not have access to it`
                : (denied.message ?? "access denied")
            return fail(message)
          }
          // The client left while the access check ran: nothing to serve.
          if (closed) return
          const granted = result.success
          const started = Git.spawnStream([parsed.service, granted.path], { env: { ...env, ...granted.env } })
          return run(Effect.result(started)).then((child) =>
            child._tag === "Failure"
              ? fail(`could not run git: ${child.failure.stderr}`)
              : serveGit(child.success, granted)
          )
        },
        (e) => fail(`internal error: ${(e as Error).message}`)
      )
    }

    // [server] BODY_IDLE_TIMEOUT for SSH: an authenticated client that sends nothing at all — not
    // even the answers to the server's keepalive pings, which every live client sends — for that
    // long is gone (its network or machine went away) and is disconnected, as sshd's
    // ClientAliveInterval × ClientAliveCountMax. A quiet but live client (a slow push, an idle
    // session) answers the pings and stays. Before authentication, LOGIN_GRACE_MS bounds it.
    const idleMs = Math.round(settings.server.BODY_IDLE_TIMEOUT * 1000)
    const keepalive = { keepaliveInterval: Math.max(100, Math.round(idleMs / 3)), keepaliveCountMax: 2 }

    const clients = new Set<ssh2.Connection>()
    const server = new Server({ hostKeys: [key], ident: "Hearth", ...keepalive }, (client) => {
      clients.add(client)
      const grace = setTimeout(() => client.end(), LOGIN_GRACE_MS)
      grace.unref()
      client.on("close", () => {
        clearTimeout(grace)
        clients.delete(client)
      })
      let identity: KeyIdentity | undefined
      let attempts = 0
      client.on("error", () => {})
      client.on("authentication", (ctx) => {
        if (++attempts > MAX_AUTH_ATTEMPTS) {
          ctx.reject()
          client.end()
          return
        }
        if (ctx.method !== "publickey" || ctx.username !== sshUser) return ctx.reject(["publickey"])
        const offered = ctx.key
        const signature = ctx.signature
        const blob = ctx.blob
        void run(keys.identify(fingerprintOf(offered.data))).then(
          (found) => {
            if (Option.isNone(found)) return ctx.reject(["publickey"])
            // Without a signature the client only asks whether this key would do.
            if (signature === undefined || blob === undefined) return ctx.accept()
            const parsed = utils.parseKey(offered.data)
            if (parsed instanceof Error || parsed.verify(blob, signature, ctx.hashAlgo) !== true)
              return ctx.reject(["publickey"])
            identity = found.value
            ctx.accept()
          },
          () => ctx.reject(["publickey"])
        )
      })
      client.on("ready", () => {
        clearTimeout(grace)
        client.on("session", (acceptSession) => {
          const session = acceptSession()
          const env: Record<string, string> = {}
          session.on("env", (accept, reject, info) => {
            // Only the protocol version git asks for, in the characters it uses.
            if (info.key === "GIT_PROTOCOL" && /^[A-Za-z0-9=:._-]{1,256}$/.test(info.val)) {
              env.GIT_PROTOCOL = info.val
              accept?.()
            } else {
              reject?.()
            }
          })
          session.on("pty", (accept) => accept?.())
          session.on("shell", (accept) => {
            const channel = accept()
            channel.stderr.write(SHELL_REFUSED)
            channel.exit(1)
            channel.end()
          })
          session.on("exec", (accept, _reject, info) => {
            const channel = accept()
            if (identity === undefined) {
              channel.stderr.write("Hearth: not authenticated\n")
              channel.exit(1)
              channel.end()
              return
            }
            exec(identity, info.command, env, channel)
          })
          session.on("subsystem", (_accept, reject) => reject())
          session.on("sftp", (_accept, reject) => reject())
        })
      })
    })

    yield* Effect.acquireRelease(
      Effect.callback<void, Error>((resume) => {
        const onError = (e: Error) =>
          resume(
            Effect.fail(
              new Error(
                `cannot listen for SSH on ${host}:${port}: ${e.message} (see [server] SSH_LISTEN_HOST and SSH_LISTEN_PORT)`
              )
            )
          )
        server.once("error", onError)
        server.listen(port, host, () => {
          server.off("error", onError)
          server.on("error", () => {})
          resume(Effect.void)
        })
      }).pipe(Effect.orDie),
      () =>
        Effect.callback<void>((resume) => {
          server.close(() => resume(Effect.void))
          // Open sessions would hold close() open: end them.
          for (const client of clients) client.end()
        })
    )
    yield* Effect.logInfo(`Hearth's SSH server is listening on ${host}:${port} (user "${sshUser}")`)
  })
)
