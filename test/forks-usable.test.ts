// A fork answers when it is usable: POST …/forks waits for the copy (up to
// [repository] FORK_WAIT_TIMEOUT), and a repository still being created (its job not finished)
// refuses every write with 409 while reads see it as an empty repository.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReposService } from "../src/repos/Service.ts"
import { UsersRepo } from "../src/users/Repo.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const BEING_CREATED = "repository is being created, try again in a moment"

let hearth: Hearth
/** Answers forks after a millisecond at most: the copy is still running when it answers. */
let hasty: Hearth
let work: string

const content = (text: string) => Buffer.from(text).toString("base64")

const makeSource = async (h: Hearth) => {
  await createUser(h, { username: "alice" })
  await createUser(h, { username: "bob" })
  expect((await request(h, "POST", "/user/repos", basic("alice"), { name: "lib", auto_init: true })).status).toBe(201)
  const added = await request(h, "POST", "/repos/alice/lib/contents/src/a.txt", basic("alice"), {
    content: content("a\n")
  })
  expect(added.status).toBe(201)
}

/** A repository of bob's left `creating`, as while its fork or migration job runs (no job here, so it stays so). */
const creatingRepo = (name: string) =>
  hearth.run(
    Effect.gen(function* () {
      const repos = yield* ReposService
      const users = yield* UsersRepo
      const bob = (yield* users.findByName("bob")).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
      const row = yield* repos.insertRow(
        bob,
        { name, description: "", default_branch: "main", is_private: false, status: "creating" },
        bob
      )
      yield* repos.initDirectory({ id: row.id, dir: repos.pathOf(bob, row) }, "main")
    })
  )

beforeAll(async () => {
  ;[hearth, hasty] = await Promise.all([startHearth(), startHearth({ repository: { FORK_WAIT_TIMEOUT: "1ms" } })])
  await Promise.all([makeSource(hearth), makeSource(hasty)])
  await creatingRepo("pending")
  work = mkdtempSync(join(tmpdir(), "hearth-forks-usable-"))
})
afterAll(async () => {
  await Promise.all([hearth?.close(), hasty?.close()])
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("POST /repos/{o}/{r}/forks", () => {
  it("answers 202 once the fork is usable: its content reads and takes writes at once", async () => {
    const res = await request(hearth, "POST", "/repos/alice/lib/forks", basic("bob"), {})
    expect(res.status).toBe(202)
    expect(await json(res)).toMatchObject({ full_name: "bob/lib", fork: true, empty: false })
    const file = await request(hearth, "GET", "/repos/bob/lib/contents/src/a.txt", basic("bob"))
    expect(file.status).toBe(200)
    expect(Buffer.from((await json(file)).content, "base64").toString()).toBe("a\n")
    const jobs = await json(await request(hearth, "GET", "/repos/bob/lib/jobs", basic("bob")))
    expect(jobs.find((j: { kind: string }) => j.kind === "fork")).toMatchObject({ state: "succeeded" })
    const write = await request(hearth, "POST", "/repos/bob/lib/contents/b.txt", basic("bob"), {
      content: content("b\n")
    })
    expect(write.status).toBe(201)
  })

  it("answers 202 at [repository] FORK_WAIT_TIMEOUT with the copy still running, which then completes", async () => {
    const res = await request(hasty, "POST", "/repos/alice/lib/forks", basic("bob"), {})
    expect(res.status).toBe(202)
    expect((await json(res)).full_name).toBe("bob/lib")
    // The job goes on without the request (a bounded wait: the time-out is the rule under test).
    let state = ""
    for (let i = 0; i < 200 && state !== "succeeded"; i++) {
      const jobs = await json(await request(hasty, "GET", "/repos/bob/lib/jobs", basic("bob")))
      state = jobs.find((j: { kind: string }) => j.kind === "fork")?.state ?? ""
      if (state !== "succeeded") await new Promise((r) => setTimeout(r, 50))
    }
    expect(state).toBe("succeeded")
    expect((await request(hasty, "GET", "/repos/bob/lib/contents/src/a.txt", basic("bob"))).status).toBe(200)
  })
})

describe("a repository still being created", () => {
  const expectBeingCreated = async (res: Response) => {
    expect(res.status).toBe(409)
    expect((await json(res)).message).toBe(BEING_CREATED)
  }

  it("refuses writes with 409: files, branches, tags, settings, transfers", async () => {
    await expectBeingCreated(
      await request(hearth, "POST", "/repos/bob/pending/contents/x.txt", basic("bob"), { content: content("x") })
    )
    await expectBeingCreated(
      await request(hearth, "POST", "/repos/bob/pending/branches", basic("bob"), { new_branch_name: "topic" })
    )
    await expectBeingCreated(await request(hearth, "POST", "/repos/bob/pending/tags", basic("bob"), { tag_name: "v1" }))
    await expectBeingCreated(
      await request(hearth, "PATCH", "/repos/bob/pending", basic("bob"), { description: "changed" })
    )
    await expectBeingCreated(
      await request(hearth, "POST", "/repos/bob/pending/transfer", basic("bob"), { new_owner: "alice" })
    )
    expect((await json(await request(hearth, "GET", "/repos/bob/pending", basic("bob")))).description).toBe("")
  })

  it("still answers 403 first to a caller who may not write", async () => {
    const res = await request(hearth, "POST", "/repos/bob/pending/contents/x.txt", basic("alice"), {
      content: content("x")
    })
    expect(res.status).toBe(403)
  })

  it("refuses a push with the same message, and no branch appears", async () => {
    const clone = join(work, "push")
    await gitIn(work, ["init", "-q", "-b", "main", clone])
    await gitIn(clone, ["commit", "-q", "--allow-empty", "-m", "first"])
    const url = `http://bob:password123@${hearth.base.replace(/^http:\/\//, "")}/bob/pending.git`
    const pushed = await gitRun(clone, ["push", url, "main"])
    expect(pushed.code).not.toBe(0)
    expect(pushed.stderr).toContain(BEING_CREATED)
    expect(await json(await request(hearth, "GET", "/repos/bob/pending/branches", basic("bob")))).toEqual([])
  })

  it("reads as an empty repository meanwhile", async () => {
    const res = await request(hearth, "GET", "/repos/bob/pending", basic("bob"))
    expect(res.status).toBe(200)
    expect(await json(res)).toMatchObject({ full_name: "bob/pending", empty: true })
    expect((await request(hearth, "GET", "/repos/bob/pending/contents/README.md", basic("bob"))).status).toBe(404)
  })
})
