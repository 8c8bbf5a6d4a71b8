// Pull mirrors (issue 4 item 3, Forgejo's `MirrorSync`): a repository of this same Hearth instance is
// mirrored (with ALLOW_LOCALNETWORKS), the source changes, the mirror follows on POST mirror-sync
// and on its interval (the schedule reads the repository's mirror_interval, so PATCH changes it),
// with the real git client. Prune on and off, the database following each sync, read-only
// mirrors, the order of refusals, and a failed sync recorded on its job with the old data kept.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const git = (args: ReadonlyArray<string>, cwd = work) => gitIn(cwd, args)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const refs = (owner: string, name: string) =>
  git(["--git-dir", dirOf(owner, name), "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"])
const withAuth = (user: string) => hearth.base.replace("http://", `http://${user}:password123@`)

const mirror = async (owner: string, source: string, name: string, extra: Record<string, unknown> = {}) => {
  const res = await request(hearth, "POST", "/repos/migrate", basic(owner), {
    clone_addr: `${hearth.base}/${source}.git`,
    repo_name: name,
    mirror: true,
    ...extra
  })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}

const commit = async (repo: string, path: string, auth = basic("alice")) =>
  expect(
    (
      await request(hearth, "POST", `/repos/${repo}/contents/${path}`, auth, {
        content: Buffer.from(`${path} ${Math.random()}\n`).toString("base64")
      })
    ).status
  ).toBe(201)

const syncJobs = async (repo: string, auth: string) =>
  ((await json(await request(hearth, "GET", `/repos/${repo}/jobs?limit=50`, auth))) as Array<any>).filter(
    (j) => j.kind === "mirror-sync"
  )

/** Asks for a sync and waits for its job to end; returns the job. */
const sync = async (repo: string, auth = basic("bob")) => {
  const before = new Set((await syncJobs(repo, auth)).map((j) => j.id))
  const res = await request(hearth, "POST", `/repos/${repo}/mirror-sync`, auth)
  expect(res.status).toBe(200)
  expect(await res.text()).toBe("")
  for (let i = 0; i < 600; i++) {
    const job = (await syncJobs(repo, auth)).find((j) => !before.has(j.id) && ["succeeded", "failed"].includes(j.state))
    if (job !== undefined) return job
    await sleep(50)
  }
  throw new Error(`the sync of ${repo} did not end`)
}

beforeAll(async () => {
  hearth = await startHearth({ migrations: { ALLOW_LOCALNETWORKS: "true" }, mirror: { MIN_INTERVAL: "1s" } })
  work = mkdtempSync(join(tmpdir(), "hearth-mirrors-"))
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  for (const name of ["src", "pruned", "moving", "doomed", "ticking"]) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, auto_init: true })).status).toBe(201)
  }
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "secret", private: true, auto_init: true }))
      .status
  ).toBe(201)
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "blank" })).status).toBe(201)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("pull mirrors", () => {
  it("follow their source on POST mirror-sync (200, empty body), and the database follows the git data", async () => {
    const created = await mirror("bob", "alice/src", "src-mirror")
    expect(created).toMatchObject({ mirror: true, mirror_interval: "8h0m0s", empty: false })
    await commit("alice/src", "one.txt")
    expect(await refs("bob", "src-mirror")).not.toBe(await refs("alice", "src"))
    await sleep(1100) // updated_at has whole seconds
    const job = await sync("bob/src-mirror")
    expect(job).toMatchObject({ state: "succeeded", attempts: 1, last_error: "" })
    expect(await refs("bob", "src-mirror")).toBe(await refs("alice", "src"))
    const after = await json(await request(hearth, "GET", "/repos/bob/src-mirror", basic("bob")))
    expectSwagger(after, "Repository")
    expect(after.updated_at > created.updated_at).toBe(true)
    // mirror_updated is the last successful sync.
    expect(after.mirror_updated > created.mirror_updated).toBe(true)
    expect(after.mirror_updated).not.toBe("1970-01-01T00:00:00Z")
    // The commit is there for a clone of the mirror.
    await git(["clone", `${hearth.base}/bob/src-mirror.git`, join(work, "src-mirror")])
    expect(await git(["log", "--format=%s", "-1"], join(work, "src-mirror"))).toBe("Add one.txt")
  })

  it("keep syncing a private source with the stored credentials, which never reach git's config", async () => {
    await mirror("alice", "alice/secret", "secret-mirror", {
      auth_username: "alice",
      auth_password: "password123",
      private: true
    })
    await commit("alice/secret", "two.txt")
    const job = await sync("alice/secret-mirror", basic("alice"))
    expect(job.state).toBe("succeeded")
    expect(await refs("alice", "secret-mirror")).toBe(await refs("alice", "secret"))
    expect(await git(["--git-dir", dirOf("alice", "secret-mirror"), "config", "--list"])).not.toMatch(
      /password123|extraheader|url =/i
    )
    const jobs = await request(hearth, "GET", "/repos/alice/secret-mirror/jobs", basic("alice"))
    expect(await jobs.text()).not.toContain("password123")
  })

  it("an empty source makes an empty mirror, which stops being empty once the source has commits", async () => {
    const created = await mirror("bob", "alice/blank", "blank-mirror")
    expect(created.empty).toBe(true)
    await commit("alice/blank", "first.txt")
    await sync("bob/blank-mirror")
    const after = await json(await request(hearth, "GET", "/repos/bob/blank-mirror", basic("bob")))
    expect(after).toMatchObject({ empty: false, default_branch: "main" })
    expect(after.size).toBeGreaterThanOrEqual(0)
  })

  it("enable_prune: a branch deleted at the source stays while off, goes when on", async () => {
    const clone = join(work, "pruned")
    await git(["clone", `${withAuth("alice")}/alice/pruned.git`, clone])
    await git(["push", "origin", "HEAD:refs/heads/feature"], clone)
    await mirror("bob", "alice/pruned", "pruned-mirror")
    expect(await refs("bob", "pruned-mirror")).toContain("refs/heads/feature")
    await git(["push", "origin", "--delete", "feature"], clone)
    expect(
      (await request(hearth, "PATCH", "/repos/bob/pruned-mirror", basic("bob"), { enable_prune: false })).status
    ).toBe(200)
    await sync("bob/pruned-mirror")
    expect(await refs("bob", "pruned-mirror")).toContain("refs/heads/feature")
    expect(
      (await request(hearth, "PATCH", "/repos/bob/pruned-mirror", basic("bob"), { enable_prune: true })).status
    ).toBe(200)
    await sync("bob/pruned-mirror")
    expect(await refs("bob", "pruned-mirror")).not.toContain("refs/heads/feature")
    expect(await refs("bob", "pruned-mirror")).toBe(await refs("alice", "pruned"))
  })

  it("the default branch follows when the mirror's default branch goes away at the source", async () => {
    const clone = join(work, "moving")
    await git(["clone", `${withAuth("alice")}/alice/moving.git`, clone])
    await git(["push", "origin", "HEAD:refs/heads/trunk"], clone)
    await mirror("bob", "alice/moving", "moving-mirror")
    expect(
      (await request(hearth, "PATCH", "/repos/alice/moving", basic("alice"), { default_branch: "trunk" })).status
    ).toBe(200)
    await git(["push", "origin", "--delete", "main"], clone)
    await sync("bob/moving-mirror")
    const after = await json(await request(hearth, "GET", "/repos/bob/moving-mirror", basic("bob")))
    expect(after.default_branch).toBe("trunk")
    expect(await git(["--git-dir", dirOf("bob", "moving-mirror"), "symbolic-ref", "HEAD"])).toBe("refs/heads/trunk")
  })

  it("are read-only: git push is refused with 403 'mirror repository is read-only'", async () => {
    const clone = join(work, "src-mirror")
    await git(["commit", "--allow-empty", "-m", "mine"], clone)
    const refused = await git(["push", `${withAuth("bob")}/bob/src-mirror.git`, "HEAD:refs/heads/main"], clone).then(
      () => "",
      (e: Error) => e.message
    )
    expect(refused).toContain("mirror repository is read-only")
    expect(await refs("bob", "src-mirror")).toBe(await refs("alice", "src"))
    // Nor can the API change its files or branches.
    const content = Buffer.from("x").toString("base64")
    const file = await request(hearth, "POST", "/repos/bob/src-mirror/contents/mine.txt", basic("bob"), { content })
    expect(file.status).toBe(403)
    expect((await json(file)).message).toBe("Git Repository is a mirror.")
    expect(
      (await request(hearth, "POST", "/repos/bob/src-mirror/branches", basic("bob"), { new_branch_name: "mine" }))
        .status
    ).toBe(403)
    expect(await refs("bob", "src-mirror")).toBe(await refs("alice", "src"))
  })

  it("record a failed sync on its job (state, last_error) and keep their old data", async () => {
    await mirror("bob", "alice/doomed", "doomed-mirror")
    const before = await refs("bob", "doomed-mirror")
    expect((await request(hearth, "DELETE", "/repos/alice/doomed", basic("alice"))).status).toBe(204)
    const job = await sync("bob/doomed-mirror")
    expect(job.state).toBe("failed")
    expect(job.attempts).toBe(3)
    expect(job.last_error).toMatch(/fetching from .*alice\/doomed\.git failed/)
    expect(await refs("bob", "doomed-mirror")).toBe(before)
    expect((await request(hearth, "GET", "/repos/bob/doomed-mirror", basic("bob"))).status).toBe(200)
  }, 60_000)

  it("sync on their interval through the schedule, which PATCH mirror_interval drives", async () => {
    await mirror("bob", "alice/ticking", "ticking-mirror", { mirror_interval: "2s" })
    await commit("alice/ticking", "tick.txt")
    const source = await refs("alice", "ticking")
    let synced = false
    for (let i = 0; i < 60 && !synced; i++) {
      await sleep(500)
      synced = (await refs("bob", "ticking-mirror")) === source
    }
    expect(synced).toBe(true)
    const jobs = await syncJobs("bob/ticking-mirror", basic("bob"))
    expect(jobs.length).toBeGreaterThan(0)
    expect(jobs.every((j) => j.state !== "failed")).toBe(true)
    // A longer interval: the next change waits for it.
    expect(
      (await request(hearth, "PATCH", "/repos/bob/ticking-mirror", basic("bob"), { mirror_interval: "10m" })).status
    ).toBe(200)
    await sleep(6000) // a sync started just before the PATCH ends
    await commit("alice/ticking", "tock.txt")
    await sleep(8000)
    expect(await refs("bob", "ticking-mirror")).not.toBe(await refs("alice", "ticking"))
  }, 60_000)
})

describe("POST /repos/{o}/{r}/mirror-sync refusals (in the order of Forgejo's MirrorSync)", () => {
  it("401 anonymous, 403 without the scope, 403 without write, 404 invisible, 423 archived, 400 not a mirror", async () => {
    expect((await request(hearth, "POST", "/repos/bob/src-mirror/mirror-sync")).status).toBe(401)
    const readOnly = await createToken(hearth, "bob", ["read:repository"])
    const scoped = await request(hearth, "POST", "/repos/bob/src-mirror/mirror-sync", `token ${readOnly}`)
    expect(scoped.status).toBe(403)
    expect((await json(scoped)).message).toContain("write:repository")
    const reader = await request(hearth, "POST", "/repos/bob/src-mirror/mirror-sync", basic("carol"))
    expect(reader.status).toBe(403)
    expect((await json(reader)).message).toBe("user should have a permission to write to a repo")
    expect((await request(hearth, "POST", "/repos/alice/secret-mirror/mirror-sync", basic("carol"))).status).toBe(404)
    expect((await request(hearth, "POST", "/user/repos", basic("carol"), { name: "plain" })).status).toBe(201)
    const notMirror = await request(hearth, "POST", "/repos/carol/plain/mirror-sync", basic("carol"))
    expect(notMirror.status).toBe(400)
    expect((await json(notMirror)).message).toBe("Repository is not a mirror")
    expect((await request(hearth, "PATCH", "/repos/carol/plain", basic("carol"), { archived: true })).status).toBe(200)
    const archived = await request(hearth, "POST", "/repos/carol/plain/mirror-sync", basic("carol"))
    expect(archived.status).toBe(423)
    expect((await json(archived)).message).toMatch(/^<Repository \d+:carol\/plain> is archived$/)
    // A write collaborator may sync.
    expect(
      (await request(hearth, "PUT", "/repos/bob/src-mirror/collaborators/carol", basic("bob"), { permission: "write" }))
        .status
    ).toBe(204)
    expect((await request(hearth, "POST", "/repos/bob/src-mirror/mirror-sync", basic("carol"))).status).toBe(200)
  })
})

describe("POST /repos/{o}/{r}/convert (Forgejo's ConvertMirror)", () => {
  it("makes a pull mirror a normal repository its owner may write to, which syncs no more", async () => {
    await mirror("bob", "alice/src", "converted", { auth_username: "alice", auth_password: "password123" })
    const before = await commitStatus("bob/converted")
    expect(before).toBe(403)
    // Someone who may see it but is not its owner: 403; nothing changes.
    const refused = await request(hearth, "POST", "/repos/bob/converted/convert", basic("carol"))
    expect(refused.status).toBe(403)
    expect((await json(await request(hearth, "GET", "/repos/bob/converted", basic("bob")))).mirror).toBe(true)

    const res = await request(hearth, "POST", "/repos/bob/converted/convert", basic("bob"))
    expect(res.status).toBe(200)
    const repo = await json(res)
    expectSwagger(repo, "Repository")
    expect(repo).toMatchObject({ full_name: "bob/converted", mirror: false, empty: false })
    expect(await commitStatus("bob/converted")).toBe(201)
    const sync = await request(hearth, "POST", "/repos/bob/converted/mirror-sync", basic("bob"))
    expect(sync.status).toBe(400)
    expect((await json(sync)).message).toBe("Repository is not a mirror")
  })

  it("refuses a repository that is no mirror with 422, and a private one it may not see with 404", async () => {
    const again = await request(hearth, "POST", "/repos/bob/converted/convert", basic("bob"))
    expect(again.status).toBe(422)
    expect((await json(again)).message).toBe("Repository is not a mirror")
    const plain = await request(hearth, "POST", "/repos/alice/src/convert", basic("alice"))
    expect(plain.status).toBe(422)
    expect((await request(hearth, "POST", "/repos/alice/secret/convert", basic("carol"))).status).toBe(404)
    expect((await request(hearth, "POST", "/repos/alice/src/convert")).status).toBe(401)
  })
})

/** The status of writing a file through the contents API as the repository's owner. */
async function commitStatus(repo: string) {
  const owner = repo.split("/")[0]!
  const res = await request(hearth, "POST", `/repos/${repo}/contents/converted-${Math.random()}.txt`, basic(owner), {
    content: Buffer.from("written\n").toString("base64")
  })
  return res.status
}
