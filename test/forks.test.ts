// Forks (issue 4 item 2, Forgejo's routers/api/v1/repo/fork.go): 202 with the new repository at once, the git data copied by
// a durable job (hard-linked objects), who may fork where, the listing and the counters.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { recoverInterruptedCreations } from "../src/jobs/Recovery.ts"
import { ReposService } from "../src/repos/Service.ts"
import { UsersRepo } from "../src/users/Repo.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const git = (args: ReadonlyArray<string>, cwd = work) => gitIn(cwd, args)

const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Waits for the repository's fork job to end; returns the job. */
const jobDone = async (owner: string, name: string, auth = basic(owner)) => {
  for (let i = 0; i < 200; i++) {
    const jobs = await json(await request(hearth, "GET", `/repos/${owner}/${name}/jobs`, auth))
    const job = jobs.find((j: { kind: string }) => j.kind === "fork")
    if (job !== undefined && ["succeeded", "failed"].includes(job.state)) return job
    await sleep(50)
  }
  throw new Error(`the fork job of ${owner}/${name} did not end`)
}

const fork = (owner: string, repo: string, auth: string, body: Record<string, unknown> = {}) =>
  request(hearth, "POST", `/repos/${owner}/${repo}/forks`, auth, body)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-forks-"))
  await Promise.all(["alice", "bob", "carol", "dave"].map((username) => createUser(hearth, { username })))
  expect(
    (
      await request(hearth, "POST", "/user/repos", basic("alice"), {
        name: "lib",
        description: "A library",
        auto_init: true
      })
    ).status
  ).toBe(201)
  const content = Buffer.from("x\n").toString("base64")
  expect(
    (await request(hearth, "POST", "/repos/alice/lib/contents/src/a.txt", basic("alice"), { content })).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/repos/alice/lib/tags", basic("alice"), { tag_name: "v1" })).status
  ).toBeLessThan(500)
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "secret", private: true, auto_init: true }))
      .status
  ).toBe(201)
  // An organization bob owns, where carol is a member without the right to create repositories.
  expect((await request(hearth, "POST", "/orgs", basic("bob"), { username: "guild" })).status).toBe(201)
  const team = await json(
    await request(hearth, "POST", "/orgs/guild/teams", basic("bob"), {
      name: "readers",
      permission: "read",
      can_create_org_repo: false,
      units: ["repo.code"]
    })
  )
  expect((await request(hearth, "PUT", `/teams/${team.id}/members/carol`, basic("bob"))).status).toBe(204)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("POST /repos/{o}/{r}/forks", () => {
  it("answers 202 with the new repository (fork, parent) and copies the git data in the background", async () => {
    const res = await fork("alice", "lib", basic("bob"))
    expect(res.status).toBe(202)
    const repo = await json(res)
    expectSwagger(repo, "Repository")
    expect(repo).toMatchObject({
      full_name: "bob/lib",
      fork: true,
      private: false,
      description: "A library",
      default_branch: "main",
      permissions: { admin: true, push: true, pull: true }
    })
    expect(repo.parent).toMatchObject({ full_name: "alice/lib", parent: null })
    const job = await jobDone("bob", "lib")
    expect(job).toMatchObject({ state: "succeeded", attempts: 1, last_error: "" })
    // The fork has the source's branches, tags and HEAD, and no trace of where it came from.
    expect(await git(["--git-dir", dirOf("bob", "lib"), "for-each-ref", "--format=%(refname) %(objectname)"])).toBe(
      await git([
        "--git-dir",
        dirOf("alice", "lib"),
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/heads",
        "refs/tags"
      ])
    )
    expect(await git(["--git-dir", dirOf("bob", "lib"), "remote"])).toBe("")
    // It clones over HTTP like any repository.
    await git(["clone", `${hearth.base}/bob/lib.git`, join(work, "bob-lib")])
    expect(await git(["log", "--format=%s", "-1"], join(work, "bob-lib"))).toBe("Add src/a.txt")
    // The source counts it; reading the fork shows its parent.
    expect((await json(await request(hearth, "GET", "/repos/alice/lib", basic("alice")))).forks_count).toBe(1)
    const again = await json(await request(hearth, "GET", "/repos/bob/lib", basic("bob")))
    expect(again.parent.full_name).toBe("alice/lib")
    expect(again.empty).toBe(false)
  })

  it("hard-links the objects: the fork costs almost no new disk and shares no files that change", async () => {
    const packs = (owner: string) => {
      const dir = join(dirOf(owner, "lib"), "objects")
      return readdirSync(dir, { recursive: true })
        .map(String)
        .filter((f) => /^[0-9a-f]{2}\/|^pack\/.*\.pack$/.test(f))
        .map((f) => statSync(join(dir, f)))
    }
    const fork = packs("bob")
    expect(fork.length).toBeGreaterThan(0)
    const sourceInodes = new Set(packs("alice").map((s) => s.ino))
    expect(fork.every((s) => sourceInodes.has(s.ino))).toBe(true)
    // Refs and config are the fork's own files.
    expect(statSync(join(dirOf("bob", "lib"), "config")).ino).not.toBe(
      statSync(join(dirOf("alice", "lib"), "config")).ino
    )
  })

  it("keeps the fork independent: a commit to the fork does not reach the source", async () => {
    const content = Buffer.from("mine\n").toString("base64")
    expect((await request(hearth, "POST", "/repos/bob/lib/contents/bob.txt", basic("bob"), { content })).status).toBe(
      201
    )
    expect((await request(hearth, "GET", "/repos/alice/lib/contents/bob.txt", basic("alice"))).status).toBe(404)
  })

  it("refuses a second fork by the same owner and a taken name with 409", async () => {
    const second = await fork("alice", "lib", basic("bob"), { name: "lib2" })
    expect(second.status).toBe(409)
    expect((await json(second)).message).toContain("already forked")
    expect((await request(hearth, "POST", "/user/repos", basic("carol"), { name: "taken" })).status).toBe(201)
    expect((await fork("alice", "lib", basic("carol"), { name: "taken" })).status).toBe(409)
    expect((await fork("alice", "lib", basic("carol"), { name: "bad name!" })).status).toBe(422)
  })

  it("needs a signed-in caller who can read the source", async () => {
    expect((await fork("alice", "lib", "")).status).toBe(401)
    expect((await fork("alice", "secret", basic("carol"))).status).toBe(404)
    expect((await fork("alice", "nothing", basic("carol"))).status).toBe(404)
  })

  it("forks into an organization only for those allowed to create repositories there", async () => {
    const unknown = await fork("alice", "lib", basic("bob"), { organization: "nope" })
    expect(unknown.status).toBe(422)
    const stranger = await fork("alice", "lib", basic("dave"), { organization: "guild" })
    expect(stranger.status).toBe(403)
    expect((await json(stranger)).message).toBe("User is no Member of Organisation 'guild'")
    const member = await fork("alice", "lib", basic("carol"), { organization: "guild" })
    expect(member.status).toBe(403)
    expect((await json(member)).message).toBe("User is not allowed to create repos in Organisation 'guild'")
    const owner = await fork("alice", "lib", basic("bob"), { organization: "guild", name: "guild-lib" })
    expect(owner.status).toBe(202)
    expect((await json(owner)).full_name).toBe("guild/guild-lib")
    expect((await jobDone("guild", "guild-lib", basic("bob"))).state).toBe("succeeded")
  })

  it("makes the fork of a private repository private", async () => {
    expect(
      (await request(hearth, "PUT", "/repos/alice/secret/collaborators/dave", basic("alice"), { permission: "read" }))
        .status
    ).toBe(204)
    const res = await fork("alice", "secret", basic("dave"))
    expect(res.status).toBe(202)
    expect((await json(res)).private).toBe(true)
    expect((await jobDone("dave", "secret")).state).toBe("succeeded")
  })
})

describe("a fork interrupted before its job started", () => {
  it("is taken up again at start-up: job row made, workflow started, git data copied", async () => {
    // As a crash right after the row was written would leave it: `creating`, no job, no directory.
    const forkId = await hearth.run(
      Effect.gen(function* () {
        const repos = yield* ReposService
        const users = yield* UsersRepo
        const carol = (yield* users.findByName("carol")).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        const source = yield* repos.find("alice", "lib")
        const row = yield* repos.insertRow(
          carol,
          {
            name: "lib-resumed",
            description: "",
            default_branch: "main",
            is_private: false,
            is_fork: true,
            fork_id: source.repo.id,
            status: "creating"
          },
          carol
        )
        return row.id
      })
    )
    await hearth.run(recoverInterruptedCreations)
    const job = await jobDone("carol", "lib-resumed")
    expect(job.state).toBe("succeeded")
    expect(
      await git([
        "--git-dir",
        dirOf("carol", "lib-resumed"),
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/heads"
      ])
    ).toBe(
      await git(["--git-dir", dirOf("alice", "lib"), "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"])
    )
    // Running it again (another start) changes nothing.
    await hearth.run(recoverInterruptedCreations)
    const jobs = await json(await request(hearth, "GET", "/repos/carol/lib-resumed/jobs", basic("carol")))
    expect(jobs.length).toBe(1)
    expect(forkId).toBeGreaterThan(0)
    expect((await request(hearth, "DELETE", "/repos/carol/lib-resumed", basic("carol"))).status).toBe(204)
  })
})

describe("a repository whose creation was cut off before its job existed", () => {
  it("is removed at start-up, row and directory", async () => {
    await hearth.run(
      Effect.gen(function* () {
        const repos = yield* ReposService
        const users = yield* UsersRepo
        const carol = (yield* users.findByName("carol")).pipe((o) => (o._tag === "Some" ? o.value : undefined))!
        const row = yield* repos.insertRow(
          carol,
          {
            name: "half-made",
            description: "",
            default_branch: "main",
            is_private: false,
            status: "creating"
          },
          carol
        )
        yield* repos.initDirectory({ id: row.id, dir: repos.pathOf(carol, row) }, "main")
      })
    )
    expect(existsSync(dirOf("carol", "half-made"))).toBe(true)
    await hearth.run(recoverInterruptedCreations)
    expect((await request(hearth, "GET", "/repos/carol/half-made", basic("carol"))).status).toBe(404)
    expect(existsSync(dirOf("carol", "half-made"))).toBe(false)
  })
})

describe("GET /repos/{o}/{r}/forks", () => {
  it("lists the forks the caller may see, counted after that filter", async () => {
    const anonymous = await request(hearth, "GET", "/repos/alice/secret/forks")
    expect(anonymous.status).toBe(404)
    // dave's fork of the private repository is private: its source's owner does not see it.
    const owner = await request(hearth, "GET", "/repos/alice/secret/forks", basic("alice"))
    expect(owner.status).toBe(200)
    expect(await json(owner)).toEqual([])
    expect(owner.headers.get("x-total-count")).toBe("0")
    const mine = await request(hearth, "GET", "/repos/alice/secret/forks", basic("dave"))
    expect((await json(mine)).map((r: { full_name: string }) => r.full_name)).toEqual(["dave/secret"])
    expect(mine.headers.get("x-total-count")).toBe("1")
    const all = await request(hearth, "GET", "/repos/alice/lib/forks")
    const names = (await json(all)).map((r: { full_name: string }) => r.full_name)
    expect(names).toEqual(["bob/lib", "guild/guild-lib"])
    expect(all.headers.get("x-total-count")).toBe("2")
    const paged = await request(hearth, "GET", "/repos/alice/lib/forks?page=2&limit=1", basic("carol"))
    expect((await json(paged)).map((r: { full_name: string }) => r.full_name)).toEqual(["guild/guild-lib"])
    expect(paged.headers.get("x-total-count")).toBe("2")
  })
})

describe("deleting", () => {
  it("keeps a fork intact when its source goes, and keeps forks_count exact", async () => {
    expect((await fork("alice", "lib", basic("dave"))).status).toBe(202)
    await jobDone("dave", "lib")
    expect((await json(await request(hearth, "GET", "/repos/alice/lib", basic("alice")))).forks_count).toBe(3)
    expect((await request(hearth, "DELETE", "/repos/dave/lib", basic("dave"))).status).toBe(204)
    expect((await json(await request(hearth, "GET", "/repos/alice/lib", basic("alice")))).forks_count).toBe(2)
    expect((await request(hearth, "DELETE", "/repos/alice/lib", basic("alice"))).status).toBe(204)
    const orphan = await json(await request(hearth, "GET", "/repos/bob/lib", basic("bob")))
    expect(orphan.fork).toBe(true)
    expect(orphan.parent).toBeNull()
    await git(["clone", `${hearth.base}/bob/lib.git`, join(work, "bob-lib-after")])
    expect(await git(["log", "--format=%s", "-1"], join(work, "bob-lib-after"))).toBe("Add bob.txt")
    await git(["--git-dir", dirOf("bob", "lib"), "fsck", "--strict", "--no-progress"])
  })
})

describe("jobs", () => {
  it("shows a repository's jobs only to its administrators, and all jobs only to site administrators", async () => {
    expect((await request(hearth, "GET", "/repos/bob/lib/jobs", basic("carol"))).status).toBe(403)
    expect((await request(hearth, "GET", "/admin/jobs", basic("bob"))).status).toBe(403)
  })
})
