// A scheduled merge survives a SIGKILL between "status posted" and "merged" (src/pulls/AutoMerge.ts,
// src/jobs/Queue.ts): a real `hearth serve` has a pull request scheduled to merge when the `ci`
// status its base branch requires succeeds; the status is posted and the server SIGKILLed right
// after the answer; started again on the same data, it merges the pull request — exactly once.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./support/federation.ts"
import { gitIn } from "./support/git.ts"
import { createAliceWithCli, killAll, onTestDatabase, restartableHearth } from "./support/spawn.ts"

const scope = Effect.runSync(Scope.make())
const dataDir = mkdtempSync(join(tmpdir(), "hearth-automerge-kill-"))
const work = mkdtempSync(join(tmpdir(), "hearth-automerge-kill-clone-"))
const clone = join(work, "clone")
let env: Record<string, string> = {}
const hearth = restartableHearth(() => env, `Basic ${Buffer.from("alice:password123").toString("base64")}`)
const git = (args: ReadonlyArray<string>) => gitIn(clone, args)
const remote = () => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}

/** Every evaluation of a scheduled merge has run. */
const settled = () =>
  eventually(
    async () => {
      const jobs = (await hearth.api("GET", "/admin/jobs?limit=50")).body as Array<{ kind: string; state: string }>
      return jobs.filter((j) => j.kind === "pull-automerge").every((j) => j.state === "succeeded") ? true : undefined
    },
    120_000,
    "the scheduled merges' evaluations"
  )

beforeAll(async () => {
  env = {
    HEARTH__server__APP_DATA_PATH: dataDir,
    HEARTH__log__LEVEL: "Error",
    HEARTH__federation__ENABLED: "false"
  }
  env = await onTestDatabase(env, scope)
  await createAliceWithCli(env)
  await hearth.start()
  expect((await hearth.api("POST", "/user/repos", { name: "app", auto_init: true })).status).toBe(201)
  await gitIn(work, ["clone", "-q", remote(), clone])
  await git(["checkout", "-q", "-b", "feature"])
  writeFileSync(join(clone, "feature.txt"), "feature\n")
  await git(["add", "feature.txt"])
  await git(["commit", "-q", "-m", "feature"])
  await git(["push", "-q", "origin", "feature:feature"])
  const rule = await hearth.api("POST", "/repos/alice/app/branch_protections", {
    rule_name: "main",
    enable_push: true,
    enable_status_check: true,
    status_check_contexts: ["ci"]
  })
  expect(rule.status).toBe(201)
}, 180_000)
afterAll(async () => {
  killAll()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dataDir, { recursive: true, force: true })
  rmSync(work, { recursive: true, force: true })
})

describe("a scheduled merge when the server is SIGKILLed right after the status that fires it", () => {
  it("merges after the restart, exactly once", async () => {
    const opened = await hearth.api("POST", "/repos/alice/app/pulls", {
      head: "feature",
      base: "main",
      title: "Feature"
    })
    expect(opened.status).toBe(201)
    const index = opened.body.number as number
    const head = opened.body.head.sha as string
    const scheduled = await hearth.api("POST", `/repos/alice/app/pulls/${index}/merge`, {
      Do: "merge",
      merge_when_checks_succeed: true
    })
    expect(scheduled.status).toBe(201)
    // Its first evaluation found `ci` missing: it waits for the status.
    await settled()
    expect((await hearth.api("GET", `/repos/alice/app/pulls/${index}`)).body.merged).toBe(false)

    const posted = await hearth.api("POST", `/repos/alice/app/statuses/${head}`, { state: "success", context: "ci" })
    expect(posted.status).toBe(201)
    expect((await hearth.kill()).signal).toBe("SIGKILL")
    const restartedAt = Date.now()
    await hearth.start()

    await eventually(
      async () =>
        (await hearth.api("GET", `/repos/alice/app/pulls/${index}`)).body.merged === true ? true : undefined,
      150_000,
      "the merge after the restart"
    )
    await settled()
    const pull = (await hearth.api("GET", `/repos/alice/app/pulls/${index}`)).body
    expect(pull).toMatchObject({ merged: true, state: "closed", merged_by: { login: "alice" } })
    // Merged by the restarted server, not by the killed one in the moment before the kill
    // (merged_at has whole seconds; starting takes longer than one).
    expect(Date.parse(pull.merged_at)).toBeGreaterThanOrEqual(restartedAt)
    const timeline = (await hearth.api("GET", `/repos/alice/app/issues/${index}/timeline`)).body as Array<{
      type: string
    }>
    expect(timeline.filter((c) => c.type === "merge_pull")).toHaveLength(1)
    expect(timeline.filter((c) => c.type === "pull_cancel_scheduled_merge")).toHaveLength(0)
    // One merge commit on main, the recorded one, with the feature commit as its second parent.
    await git(["remote", "set-url", "origin", remote()])
    await git(["fetch", "-q", "origin"])
    const merges = (await git(["rev-list", "--merges", "origin/main"])).split("\n").filter((l) => l !== "")
    expect(merges).toEqual([pull.merge_commit_sha])
    expect(await git(["log", "-1", "--format=%P", "origin/main"])).toContain(head)
    expect((await hearth.api("DELETE", `/repos/alice/app/pulls/${index}/merge`)).status).toBe(404)
  }, 400_000)
})
