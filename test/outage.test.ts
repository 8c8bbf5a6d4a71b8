// Database outages are reported honestly (issue 15 item 7): with PostgreSQL stopped under a running
// Hearth, requests that need it answer 503 with Retry-After and `{message, url}` (API routes, and
// git over HTTP, federation), the log gets one line instead of a stack per request, /api/healthz reports
// "fail" while /version still answers; once PostgreSQL is back, requests succeed again without
// restarting Hearth. Runs only on PostgreSQL (TEST_DATABASE_URL): the test starts a server of its
// own (infra/pg) so that it can stop it; the embedded database cannot go away.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { federatedSettings } from "./support/federation.ts"
import { basic, createToken, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { sleep } from "./support/spawn.ts"

const run = promisify(execFile)
const pgScripts = resolve(import.meta.dirname, "../infra/pg")
const onPostgres = process.env.TEST_DATABASE_URL !== undefined && process.env.TEST_DATABASE_URL !== ""

describe.runIf(onPostgres)("a PostgreSQL outage", () => {
  let pgDir: string
  let pgPort: number
  let hearth: Hearth
  let token: string
  const logged: Array<string> = []

  const startPg = async () => (await run("bash", [join(pgScripts, "start.sh"), pgDir, String(pgPort)])).stdout.trim()
  const stopPg = () => run("bash", [join(pgScripts, "stop.sh"), pgDir])

  beforeAll(async () => {
    pgDir = mkdtempSync(join(tmpdir(), "hearth-outage-pg-"))
    pgPort = await freePort()
    const url = await startPg()
    hearth = await startHearth(
      federatedSettings({ database: { DB_TYPE: "postgres", DATABASE_URL: url }, log: { LEVEL: "Warning" } })
    )
    await createUser(hearth, { username: "alice" })
    token = await createToken(hearth, "alice")
    expect(
      (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "demo", auto_init: true })).status
    ).toBe(201)
  })
  afterAll(async () => {
    vi.restoreAllMocks()
    await hearth?.close()
    if (pgDir === undefined) return
    await run("bash", [join(pgScripts, "stop.sh"), pgDir, "--rm"]).catch(() => {})
    rmSync(pgDir, { recursive: true, force: true })
  })

  const health = async () => {
    const res = await fetch(`${hearth.base}/api/healthz`)
    return { status: res.status, type: res.headers.get("content-type"), body: await json(res) }
  }

  it("answers 503 with Retry-After while the database is down, logs one line, and recovers", {
    timeout: 60_000
  }, async () => {
    expect((await health()).status).toBe(200)
    const capture = (...args: Array<unknown>) => void logged.push(args.map(String).join(" "))
    vi.spyOn(console, "log").mockImplementation(capture)
    vi.spyOn(console, "error").mockImplementation(capture)
    vi.spyOn(console, "warn").mockImplementation(capture)
    await stopPg()

    const errorUrl = `${hearth.base}/api/swagger`
    const needsDatabase = [
      () => request(hearth, "GET", "/users/alice"), // anonymous
      () => request(hearth, "GET", "/user", `token ${token}`), // the credentials are checked in the database
      () => request(hearth, "GET", "/repos/alice/demo", basic("alice")),
      () => request(hearth, "POST", "/user/repos", `token ${token}`, { name: "during" })
    ]
    for (let round = 0; round < 3; round++) {
      for (const call of needsDatabase) {
        const res = await call()
        expect(res.status).toBe(503)
        expect(res.headers.get("retry-after")).toMatch(/^\d+$/)
        expect(await json(res)).toEqual({
          message: "the database is unavailable; try again in a moment",
          url: errorUrl
        })
      }
    }
    // Git over HTTP needs the database too (who may read the repository).
    const git = await fetch(`${hearth.base}/alice/demo.git/info/refs?service=git-upload-pack`)
    expect(git.status).toBe(503)
    expect(git.headers.get("retry-after")).toMatch(/^\d+$/)

    // So do the federation routes (who the actor is).
    const actor = await fetch(hearth.api("/activitypub/user/alice"), {
      headers: { accept: "application/activity+json" }
    })
    expect(actor.status).toBe(503)
    expect(actor.headers.get("retry-after")).toMatch(/^\d+$/)

    // What does not need the database goes on.
    expect((await fetch(hearth.api("/version"))).status).toBe(200)
    const failing = await health()
    expect(failing.status).toBe(424)
    expect(failing.type).toBe("application/json")
    expect(failing.body).toMatchObject({
      status: "fail",
      checks: { "cache:ping": [{ status: "pass" }], "database:ping": [{ status: "fail" }] }
    })

    // Long enough for the cluster to poll its storage (every 10 s) and fail meanwhile.
    await sleep(12_000)
    for (const call of needsDatabase) expect((await call()).status).toBe(503)

    // One line for the outage: no stack trace for each request, nor for the cluster's polls.
    const lines = logged.join("\n")
    expect(logged.filter((line) => line.includes("the database is unavailable"))).toHaveLength(1)
    expect(lines).not.toContain("unhandled error")
    expect(lines).not.toMatch(/\n\s+at /)

    await startPg()
    // The pool reconnects by itself: the next requests succeed.
    const back = await request(hearth, "GET", "/users/alice")
    expect(back.status).toBe(200)
    expect((await request(hearth, "GET", "/user", `token ${token}`)).status).toBe(200)
    expect((await request(hearth, "POST", "/user/repos", `token ${token}`, { name: "after" })).status).toBe(201)
    expect((await fetch(`${hearth.base}/alice/demo.git/info/refs?service=git-upload-pack`)).status).toBe(200)
    const healthy = await health()
    expect(healthy.status).toBe(200)
    expect(healthy.body.status).toBe("pass")
  })
})
