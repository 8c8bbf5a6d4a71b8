// The production bundle (`npm run build`, infra/build.ts): built once here, into a directory of its
// own inside the package, and run as a real process on a fresh data dir — `migrate`, `admin user
// create`, `serve` — to prove that everything the sources find on disk (package.json, web assets,
// the embedded database's initdb script, packages loaded on first use) is found from the bundle
// too (src/lib/PackageRoot.ts). And bin/entry.js's rule: the bundle runs only while it is newer
// than what it is built from.
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chooseEntry } from "../bin/entry.js"
import { gitIn } from "./support/git.ts"
import { freePort } from "./support/hearth.ts"
import { type HearthProcess, killAll, onTestDatabase, sleep, spawnHearth, within } from "./support/spawn.ts"

const root = resolve(import.meta.dirname, "..")
const node = join(root, "node_modules/.bin/node")
// Inside the package (the bundle finds node_modules and Hearth's files from there); .tmp/ is ignored by git.
mkdirSync(join(root, ".tmp"), { recursive: true })
const outDir = mkdtempSync(join(root, ".tmp", "bundle-test-"))
const entry = join(outDir, "hearth.mjs")
const dir = mkdtempSync(join(tmpdir(), "hearth-bundle-"))
const scope = Effect.runSync(Scope.make())
const auth = `Basic ${Buffer.from("alice:password123").toString("base64")}`
let env: Record<string, string> = {}
let server: HearthProcess | undefined
let base = ""
let built = ""

const run = async (args: ReadonlyArray<string>) => {
  const child = spawnHearth(env, args, 0, entry)
  // Generous: on the embedded database the first command creates the database (initdb), which took
  // 60–90 s on the shared 2-core machine at load average 10–40.
  const { code } = await within(child.exited, 240_000, `hearth ${args.join(" ")} from the bundle`)
  return { code, ...child.output() }
}

beforeAll(async () => {
  built = await within(
    new Promise<string>((done, fail) =>
      execFile(node, ["infra/build.ts", "--out-dir", outDir], { cwd: root }, (error, stdout, stderr) =>
        error === null ? done(stdout) : fail(new Error(`npm run build failed: ${stderr}`))
      )
    ),
    120_000,
    "the build"
  )
  env = await onTestDatabase({ HEARTH__server__APP_DATA_PATH: join(dir, "data"), HEARTH__log__LEVEL: "Error" }, scope)
}, 150_000)

afterAll(async () => {
  killAll()
  await server?.exited
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dir, { recursive: true, force: true })
  rmSync(outDir, { recursive: true, force: true })
})

describe("the bundle", () => {
  it("is one entry module and chunks for what the sources load lazily", () => {
    expect(built).toMatch(/^built .*hearth\.mjs and \d+ chunks/)
    const chunks = readdirSync(join(outDir, "chunks")).filter((f) => f.endsWith(".mjs"))
    // The markdown renderer, the docs viewer, the embedded database, OpenPGP keys: each its own chunk.
    for (const lazy of ["Render-", "httpApiScalar-", "Pglite-", "Keys-"]) {
      expect([lazy, chunks.some((f) => f.startsWith(lazy))]).toEqual([lazy, true])
    }
    // effect is inside, not loaded from node_modules.
    expect(readFileSync(entry, "utf8")).not.toMatch(/from "effect/)
    // Node's built-ins without their ES module facade (infra/build.ts): `node:http`'s loads undici.
    for (const file of [entry, ...chunks.map((f) => join(outDir, "chunks", f))]) {
      const code = readFileSync(file, "utf8")
      expect([file, code.match(/^import [^;]*from "node:[^"]*";$/m)?.[0]]).toEqual([file, undefined])
    }
    expect(readFileSync(entry, "utf8")).toContain('process.getBuiltinModule("node:module")')
  })

  it("migrates a fresh database, then makes an account", async () => {
    const migrated = await run(["migrate"])
    expect(migrated.code, migrated.stderr).toBe(0)
    expect(migrated.stdout).toMatch(/^Applied \d+ migration\(s\): 1 foundation/)
    const created = await run([
      "admin",
      "user",
      "create",
      "--username",
      "alice",
      "--email",
      "alice@example.com",
      "--password",
      "password123",
      "--admin"
    ])
    expect(created.code, created.stderr).toBe(0)
  }, 500_000)

  it("serves: the first request, package.json's version", async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    server = spawnHearth({ ...env, HEARTH__server__ROOT_URL: `${base}/` }, ["serve"], port, entry)
    const res = await within(
      (async () => {
        for (;;) {
          const r = await fetch(`${base}/api/v1/version`).catch(() => undefined)
          if (r !== undefined) return r
          if (server!.child.exitCode !== null) throw new Error(`serve exited: ${server!.output().stderr}`)
          await sleep(50)
        }
      })(),
      90_000,
      "the first answer"
    )
    expect(res.status).toBe(200)
    const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
    expect(await res.json()).toEqual({ version, Version: version })
  }, 120_000)

  it("takes a git push over HTTP, then renders the repository's page with its assets", async () => {
    const created = await fetch(`${base}/api/v1/user/repos`, {
      method: "POST",
      headers: { authorization: auth, "content-type": "application/json" },
      body: JSON.stringify({ name: "demo" })
    })
    expect(created.status).toBe(201)
    const work = join(dir, "work")
    mkdirSync(work)
    await gitIn(work, ["init", "-q", "-b", "main"])
    writeFileSync(join(work, "README.md"), "# Demo\n\nServed from the bundle.\n")
    await gitIn(work, ["add", "."])
    await gitIn(work, ["commit", "-q", "-m", "first"])
    const remote = `http://alice:password123@${base.slice("http://".length)}/alice/demo.git`
    await gitIn(work, ["push", "-q", remote, "main"])
    const branch = await fetch(`${base}/api/v1/repos/alice/demo/branches/main`, { headers: { authorization: auth } })
    expect(branch.status).toBe(200)
    expect(((await branch.json()) as { commit: { message: string } }).commit.message.trim()).toBe("first")

    const page = await fetch(`${base}/alice/demo`)
    expect(page.status).toBe(200)
    const html = await page.text()
    expect(html).toContain("Served from the bundle.") // the README, rendered (markdown's lazy chunk)
    // The stylesheet and scripts from node_modules, and copy.js from src/web/static.
    const assets = [...new Set(html.match(/\/assets\/[\w.-]+/g) ?? [])]
    expect(assets.some((a) => a.startsWith("/assets/copy."))).toBe(true)
    expect(assets.some((a) => a.startsWith("/assets/hearth."))).toBe(true)
    for (const asset of assets) {
      const res = await fetch(`${base}${asset}`)
      expect([asset, res.status]).toEqual([asset, 200])
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(0)
    }
  }, 120_000)

  it("serves the API's docs page (its viewer a lazy chunk)", async () => {
    const res = await fetch(`${base}/api/swagger`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain("<html")
  }, 60_000)
})

describe("bin/entry.js: which code `hearth` runs", () => {
  const fake = mkdtempSync(join(tmpdir(), "hearth-entry-"))
  afterAll(() => rmSync(fake, { recursive: true, force: true }))
  const file = (path: string, seconds: number) => {
    mkdirSync(join(fake, path, ".."), { recursive: true })
    writeFileSync(join(fake, path), "")
    utimesSync(join(fake, path), seconds, seconds)
  }
  const sources = join(fake, "src", "cli.ts")
  const bundle = join(fake, "dist", "hearth.mjs")

  it("runs the sources when nothing was built", () => {
    file("src/cli.ts", 1000)
    file("src/web/Web.ts", 1000)
    file("package.json", 1000)
    file("node_modules/.package-lock.json", 1000)
    expect(chooseEntry(fake)).toEqual({ entry: sources, stale: false })
  })

  it("runs the bundle while it is newer than the sources, package.json and the installed packages", () => {
    file("dist/hearth.mjs", 2000)
    expect(chooseEntry(fake)).toEqual({ entry: bundle, stale: false })
  })

  it("runs the sources, and says the bundle is stale, after a change to any of them", () => {
    file("src/web/Web.ts", 3000) // an edit, a pull
    expect(chooseEntry(fake)).toEqual({ entry: sources, stale: true })
    file("dist/hearth.mjs", 4000) // built again
    expect(chooseEntry(fake)).toEqual({ entry: bundle, stale: false })
    file("node_modules/.package-lock.json", 5000) // npm install / upgrade
    expect(chooseEntry(fake)).toEqual({ entry: sources, stale: true })
    file("dist/hearth.mjs", 6000)
    file("package.json", 7000)
    expect(chooseEntry(fake)).toEqual({ entry: sources, stale: true })
  })
})
