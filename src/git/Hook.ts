// The pre-receive decision of a push, made by the running Hearth process (as Forgejo's
// `gitea hook pre-receive` asks its internal API, routers/private/hook_pre_receive.go).
//
// receive-pack runs the pre-receive hook (Refusal.ts's script, in every push's `core.hooksPath`)
// after it has received the pack into quarantine and before any ref moves. When the push carries
// `HEARTH_HOOK_URL`, the hook sends its input (`<old> <new> <ref>` lines) with curl to this loopback
// server, together with `$HEARTH_HOOK_SESSION` and git's quarantine variables
// (GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_QUARANTINE_PATH), so that the checks
// see the pushed objects. The answer is empty to let the push through, else the lines the hook
// prints (git shows them as `remote: …` and each ref as "pre-receive hook declined").
//
// The session is the push's identity (repository, pusher) sealed with a key made at start: the
// server keeps no state per push, and a session cannot be forged or altered by whoever reaches
// the port. It only ever listens on 127.0.0.1.
//
// Cost per push (measured in test/branch-protection.test.ts): one curl process and one local
// HTTP request, plus what the decision reads.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { isAbsolute, join } from "node:path"

/** One ref a push moves, as receive-pack gives it to the hook. */
export interface HookRefLine {
  readonly oldSha: string
  readonly newSha: string
  readonly ref: string
}

export interface HookRequest<S> {
  readonly session: S
  readonly refs: ReadonlyArray<HookRefLine>
  /** For git run on the repository: GIT_DIR and the quarantine's object directories. */
  readonly gitEnv: (repoPath: string) => Record<string, string>
}

/** The hook's input lines. */
export const parseHookInput = (text: string): Array<HookRefLine> =>
  text
    .split("\n")
    .map((line) => /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line.trim()))
    .flatMap((m) => (m === null ? [] : [{ oldSha: m[1]!, newSha: m[2]!, ref: m[3]! }]))

export interface HookServer<S> {
  /** The environment that makes a push ask this server. */
  readonly envFor: (session: S) => Record<string, string>
  readonly close: () => Promise<void>
}

const MAX_INPUT = 4 * 1024 * 1024

/** One hook's call: its session, its input, and git's environment for the repository. */
export interface SessionCall<S> {
  readonly session: S
  readonly body: string
  /** For git run on the repository: GIT_DIR and the quarantine's object directories. */
  readonly gitEnv: (repoPath: string) => Record<string, string>
}

/**
 * Starts a loopback server for hooks that carry a sealed session (`envFor`'s variables under
 * `names`): `answer` turns each call into the text the hook prints; if it throws, the hook gets a
 * 500 with the error's message. Shared by the pre-receive decision below and AGit's proc-receive
 * hook (src/git/ProcReceive.ts).
 */
export const startSessionServer = async <S>(
  path: string,
  names: { readonly url: string; readonly session: string },
  answer: (call: SessionCall<S>) => Promise<string>
): Promise<HookServer<S>> => {
  const key = randomBytes(32)
  const sign = (payload: string) => createHmac("sha256", key).update(payload).digest("base64url")
  const open = (token: string): S | undefined => {
    const [payload, mac] = token.split(".")
    if (payload === undefined || mac === undefined) return undefined
    const expected = Buffer.from(sign(payload))
    const given = Buffer.from(mac)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined
    return JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as S
  }

  const server: Server = createServer((req, res) => {
    const reply = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
      res.end(body)
    }
    const session = open(String(req.headers["x-hearth-session"] ?? ""))
    if (req.method !== "POST" || req.url !== path || session === undefined) return reply(403, "")
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_INPUT) chunks.push(chunk)
    })
    req.on("end", () => {
      const header = (name: string) => String(req.headers[name] ?? "")
      const gitEnv = (repoPath: string) => {
        const resolve = (p: string) => (p === "" || isAbsolute(p) ? p : join(repoPath, p))
        const env: Record<string, string> = { GIT_DIR: repoPath }
        const objects = resolve(header("x-git-object-directory"))
        const alternates = header("x-git-alternate-object-directories")
          .split(":")
          .filter((p) => p !== "")
          .map(resolve)
          .join(":")
        const quarantine = resolve(header("x-git-quarantine-path"))
        if (objects !== "") env.GIT_OBJECT_DIRECTORY = objects
        if (alternates !== "") env.GIT_ALTERNATE_OBJECT_DIRECTORIES = alternates
        if (quarantine !== "") env.GIT_QUARANTINE_PATH = quarantine
        return env
      }
      answer({ session, body: Buffer.concat(chunks).toString("utf8"), gitEnv }).then(
        (text) => reply(200, text),
        (error) => reply(500, `could not check the push: ${(error as Error).message}`)
      )
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  server.unref()
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`
  return {
    envFor: (session) => {
      const payload = Buffer.from(JSON.stringify(session)).toString("base64url")
      return { [names.url]: url, [names.session]: `${payload}.${sign(payload)}` }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/**
 * Starts the loopback server; `decide` answers each push with the refusal to print, or undefined.
 * `decide` may throw: the push is then refused with a message saying the check failed.
 */
export const startHookServer = <S>(
  decide: (request: HookRequest<S>) => Promise<string | undefined>
): Promise<HookServer<S>> =>
  startSessionServer<S>(
    "/pre-receive",
    { url: "HEARTH_HOOK_URL", session: "HEARTH_HOOK_SESSION" },
    async ({ session, body, gitEnv }) => {
      const refusal = await decide({ session, refs: parseHookInput(body), gitEnv })
      return refusal === undefined ? "" : `Hearth: ${refusal}\n`
    }
  )
