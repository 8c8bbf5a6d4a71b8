// [repository.pull-request] RETARGET_CHILDREN_ON_MERGE = false (issue 19 item 9): with the
// instance's switch off, a pull request based on a merged pull request's head branch stays on it
// when that branch is deleted after the merge (and is closed, its base gone), whatever the repository's own switch says
// (test/pulls-retarget.test.ts covers the rule itself). A server of its own for the setting.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string

beforeAll(async () => {
  hearth = await startHearth({ "repository.pull-request": { RETARGET_CHILDREN_ON_MERGE: "false" } })
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-retarget-off-"))
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

it("leaves the children on the deleted branch", async () => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = "alice"
  u.password = "password123"
  const clone = join(work, "clone")
  await gitIn(work, ["clone", "-q", u.toString(), clone])
  for (const [name, from] of [
    ["parent", "origin/main"],
    ["child", "parent"]
  ]) {
    await gitIn(clone, ["checkout", "-q", "-B", name, from!])
    writeFileSync(join(clone, `${name}.txt`), `${name}\n`)
    await gitIn(clone, ["add", `${name}.txt`])
    await gitIn(clone, ["commit", "-q", "-m", name!])
    await gitIn(clone, ["push", "-q", "origin", `${name}:${name}`])
  }
  const open = async (head: string, base: string) =>
    (await json(await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), { head, base, title: head })))
      .number as number
  const parent = await open("parent", "main")
  const child = await open("child", "parent")
  const merged = await request(hearth, "POST", `/repos/alice/app/pulls/${parent}/merge`, basic("alice"), {
    Do: "merge",
    delete_branch_after_merge: true
  })
  expect(merged.status, await merged.clone().text()).toBe(200)
  expect((await request(hearth, "GET", "/repos/alice/app/branches/parent", basic("alice"))).status).toBe(404)
  expect(
    (await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))).retarget_children_on_merge
  ).toBe(true)
  const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${child}`, basic("alice")))
  expect(pull.base.ref).toBe("parent")
  // Its base branch is gone: it is closed (Forgejo's CloseBranchPulls).
  expect(pull.state).toBe("closed")
  const timeline = await json(await request(hearth, "GET", `/repos/alice/app/issues/${child}/timeline`, basic("alice")))
  expect(timeline.map((c: { type: string }) => c.type)).not.toContain("change_target_branch")
}, 120_000)
