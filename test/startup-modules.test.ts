// What `hearth serve` loads before it answers: heavy modules that only some requests use are
// loaded when first used (src/lib/LazyRequire.ts), not at start-up, where each costs start-up time
// and memory for the life of the process (infra/bench/README.md, "Issue 16: start, RSS,
// throughput"). A real process (src/cli.ts serve), its modules recorded by a preloaded hook.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { get } from "node:http"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort } from "./support/hearth.ts"
import { killAll, onTestDatabase, sleep, spawnHearth, within } from "./support/spawn.ts"

const hook = resolve(import.meta.dirname, "support/loaded-modules.ts")
const dir = mkdtempSync(join(tmpdir(), "hearth-startup-modules-"))
const scope = Effect.runSync(Scope.make())
let modules: Array<string> = []

const version = (port: number) =>
  new Promise<number>((done) => {
    const req = get({ host: "127.0.0.1", port, path: "/api/v1/version", agent: false, timeout: 2000 }, (res) => {
      res.resume()
      res.on("end", () => done(res.statusCode ?? 0))
    })
    req.on("timeout", () => req.destroy())
    req.on("error", () => done(0))
  })

beforeAll(async () => {
  const file = join(dir, "modules.txt")
  const env = await onTestDatabase({ HEARTH__server__APP_DATA_PATH: join(dir, "data") }, scope)
  const port = await freePort()
  // From the sources: the record names each module's own file (the bundle holds most of them in one).
  const server = spawnHearth(
    { ...env, NODE_OPTIONS: `--import=${hook}`, LOADED_MODULES_FILE: file },
    ["serve"],
    port,
    "src/cli.ts"
  )
  await within(
    (async () => {
      while ((await version(port)) !== 200) await sleep(20)
    })(),
    120_000,
    "hearth serve's first 200"
  )
  server.child.kill("SIGUSR2")
  await within(
    (async () => {
      while (!existsSync(file)) await sleep(20)
    })(),
    10_000,
    "the list of loaded modules"
  )
  await sleep(100)
  modules = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line !== "")
  // Shutdown is test/lifecycle.test.ts's.
  server.child.kill("SIGKILL")
  await server.exited
}, 180_000)
afterAll(async () => {
  killAll()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
})

const loadedFrom = (pkg: string) => modules.filter((url) => url.includes(`/node_modules/${pkg}/`))

describe("hearth serve, when it first answers", () => {
  it("has loaded the modules it serves with (the record works)", () => {
    expect(loadedFrom("effect").length).toBeGreaterThan(100)
    expect(modules.some((url) => url.endsWith("/src/Server.ts"))).toBe(true)
  })

  it("has not loaded what only some requests use: yaml (issue templates), otpauth (two-factor), editorconfig", () => {
    expect(loadedFrom("yaml")).toEqual([])
    expect(loadedFrom("otpauth")).toEqual([])
    // `GET /repos/{o}/{r}/editorconfig/{path}`'s parser, with semver.
    expect(loadedFrom("editorconfig")).toEqual([])
    expect(loadedFrom("semver")).toEqual([])
  })

  it("has not loaded the syntax highlighter, markdown, OpenPGP, the SSH server or the docs viewer", () => {
    for (const pkg of ["highlight.js", "linguist-languages", "marked", "sanitize-html", "openpgp", "ssh2", "sshpk"]) {
      expect([pkg, loadedFrom(pkg)]).toEqual([pkg, []])
    }
    // The docs page's 3 MB viewer (effect's `HttpApiScalar` imports it when the page is first asked for).
    expect(modules.filter((url) => url.includes("/http-api/internal/httpApiScalar"))).toEqual([])
  })
})
