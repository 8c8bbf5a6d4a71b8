// Durable jobs survive the server being killed (issue 4 item 1): a real `hearth serve` process is
// SIGKILLed in the middle of a fork job, started again on the same data, and the job finishes —
// once, from the user's point of view — on either database.

import { execFileSync } from "node:child_process"
import { mkdtempSync, renameSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { createAliceWithCli, killAll, onTestDatabase, restartableHearth, sleep } from "./support/spawn.ts"

const scope = Effect.runSync(Scope.make())
const dataDir = mkdtempSync(join(tmpdir(), "hearth-jobs-kill-"))
let env: Record<string, string> = {}
const hearth = restartableHearth(() => env, `Basic ${Buffer.from("alice:password123").toString("base64")}`)
const { api, start } = hearth

const kill = async () => expect((await hearth.kill()).signal).toBe("SIGKILL")

/** Polls the repository's fork job until `done` says so. */
const waitForJob = async (repo: string, done: (job: any) => boolean, what: string) => {
  for (let i = 0; i < 1200; i++) {
    const jobs = await api("GET", `/repos/${repo}/jobs`)
    const job = (jobs.body ?? []).find((j: { kind: string }) => j.kind === "fork")
    if (job !== undefined && done(job)) return job
    await sleep(50)
  }
  throw new Error(`the fork job of ${repo} never became ${what}`)
}

const dirOf = (owner: string, name: string) => join(dataDir, "repositories", owner, `${name}.git`)
const refsOf = (dir: string) =>
  execFileSync(
    "git",
    ["--git-dir", dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"],
    { env: gitEnv() }
  ).toString("utf8")

beforeAll(async () => {
  env = {
    HEARTH__server__APP_DATA_PATH: dataDir,
    HEARTH__log__LEVEL: "Error",
    // The fork answers 202 at once, with its job still running: these tests kill it mid-way.
    HEARTH__repository__FORK_WAIT_TIMEOUT: "1ms"
  }
  env = await onTestDatabase(env, scope)
  await createAliceWithCli(env)
  await start()
  expect((await api("POST", "/user/repos", { name: "src", auto_init: true })).status).toBe(201)
  const content = Buffer.from("payload\n").toString("base64")
  expect((await api("POST", "/repos/alice/src/contents/data.txt", { content })).status).toBe(201)
  for (const org of ["team", "crew"]) expect((await api("POST", "/orgs", { username: org })).status).toBe(201)
}, 120_000)

afterAll(async () => {
  killAll()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dataDir, { recursive: true, force: true })
})

describe("a fork job and SIGKILL", () => {
  it("killed while waiting to retry a failed step, resumes after a restart and finishes once", async () => {
    // The source's files are away, so the first copy fails and the job waits (durably) to retry.
    renameSync(dirOf("alice", "src"), `${dirOf("alice", "src")}.away`)
    const forked = await api("POST", "/repos/alice/src/forks", { organization: "team" })
    expect(forked.status).toBe(202)
    const waiting = await waitForJob("team/src", (job) => job.state === "retrying", "retrying")
    expect(waiting.attempts).toBe(1)
    expect(waiting.last_error).not.toBe("")
    await kill()
    renameSync(`${dirOf("alice", "src")}.away`, dirOf("alice", "src"))
    await start()
    const job = await waitForJob("team/src", (job) => job.state === "succeeded" || job.state === "failed", "finished")
    expect(job).toMatchObject({ state: "succeeded", attempts: 2 })
    expect(refsOf(dirOf("team", "src"))).toBe(refsOf(dirOf("alice", "src")))
    const forks = await api("GET", "/repos/alice/src/forks")
    expect(forks.body.map((r: { full_name: string }) => r.full_name)).toEqual(["team/src"])
    expect((await api("GET", "/repos/alice/src")).body.forks_count).toBe(1)
    expect((await api("GET", "/repos/team/src/contents/data.txt")).status).toBe(200)
  }, 180_000)

  it("killed right after answering 202, finishes after a restart", async () => {
    const forked = await api("POST", "/repos/alice/src/forks", { organization: "crew" })
    expect(forked.status).toBe(202)
    await kill()
    await start()
    const job = await waitForJob("crew/src", (job) => job.state === "succeeded" || job.state === "failed", "finished")
    expect(job.state).toBe("succeeded")
    expect(refsOf(dirOf("crew", "src"))).toBe(refsOf(dirOf("alice", "src")))
    expect((await api("GET", "/repos/alice/src")).body.forks_count).toBe(2)
    execFileSync("git", ["--git-dir", dirOf("crew", "src"), "fsck", "--strict", "--no-progress"], { env: gitEnv() })
  }, 180_000)
})
