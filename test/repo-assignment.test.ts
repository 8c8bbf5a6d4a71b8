// Repository assignment (src/repos/Assignment.ts, issue 16 item 1): the route's `Access` annotation
// names the role it needs on the repository of its path; one middleware resolves it and applies the
// one rule (Policy.ts `repoRefusal`). A table of callers × repositories × routes of each role, then
// renames (307) and the unit rule.
import { Context, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HearthApi } from "../src/Api.ts"
import { Access, type RepoRule } from "../src/http/Access.ts"
import { repoRefusal } from "../src/repos/Policy.ts"
import { ReposService } from "../src/repos/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const auth: Record<string, string | undefined> = {}

const CALLERS = ["anonymous", "reader", "writer", "admin", "owner", "siteadmin", "publiconly"] as const
type CallerName = (typeof CALLERS)[number]
const KINDS = ["public", "private", "archived"] as const
type Kind = (typeof KINDS)[number]

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["owner", "reader", "writer", "maintainer"].map((username) => createUser(hearth, { username })))
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  for (const name of ["reader", "writer", "owner", "siteadmin"]) auth[name] = basic(name)
  auth.admin = basic("maintainer")
  auth.anonymous = undefined
  // The owner's own token, limited to public repositories.
  auth.publiconly = `token ${await createToken(hearth, "owner", ["public-only", "write:repository"])}`
  for (const kind of KINDS) {
    const created = await request(hearth, "POST", "/user/repos", basic("owner"), {
      name: kind,
      private: kind === "private",
      auto_init: true
    })
    expect(created.status, await created.text()).toBe(201)
    for (const level of ["read", "write", "admin"] as const) {
      const who = { read: "reader", write: "writer", admin: "maintainer" }[level]
      const put = await request(hearth, "PUT", `/repos/owner/${kind}/collaborators/${who}`, basic("owner"), {
        permission: level
      })
      expect(put.status).toBe(204)
    }
  }
  expect((await request(hearth, "PATCH", "/repos/owner/archived", basic("owner"), { archived: true })).status).toBe(200)
})
afterAll(async () => {
  await hearth?.close()
})

/** Expected statuses per caller, in the order of CALLERS. */
const row = (...statuses: ReadonlyArray<number>) =>
  Object.fromEntries(CALLERS.map((caller, i) => [caller, statuses[i]!])) as Record<CallerName, number>

let branch = 0
const ROUTES: ReadonlyArray<{
  readonly name: string
  readonly call: (repo: string, caller: CallerName) => Promise<Response>
  readonly expected: Record<Kind, Record<CallerName, number>>
  /** The refusal's message for a caller without the role. */
  readonly refused?: string
}> = [
  {
    name: "GET /repos/{o}/{r} (read)",
    call: (repo, caller) => request(hearth, "GET", `/repos/owner/${repo}`, auth[caller]),
    expected: {
      public: row(200, 200, 200, 200, 200, 200, 200),
      private: row(404, 200, 200, 200, 200, 200, 403),
      archived: row(200, 200, 200, 200, 200, 200, 200)
    }
  },
  {
    name: "PATCH /repos/{o}/{r} (admin, settings)",
    call: (repo, caller) => request(hearth, "PATCH", `/repos/owner/${repo}`, auth[caller], { description: caller }),
    // Settings of an archived repository can still change (that is how it is un-archived).
    expected: {
      public: row(401, 403, 403, 200, 200, 200, 200),
      private: row(401, 403, 403, 200, 200, 200, 403),
      archived: row(401, 403, 403, 200, 200, 200, 200)
    },
    refused: "user should be an owner or a collaborator with admin write of a repository"
  },
  {
    name: "POST /repos/{o}/{r}/branches (write on code, content)",
    call: (repo, caller) =>
      request(hearth, "POST", `/repos/owner/${repo}/branches`, auth[caller], { new_branch_name: `b${++branch}` }),
    expected: {
      public: row(401, 403, 201, 201, 201, 201, 201),
      private: row(401, 403, 201, 201, 201, 201, 403),
      archived: row(401, 403, 423, 423, 423, 423, 423)
    },
    refused: "user should have a permission to write to a repo"
  }
]

describe("the role × caller × repository table", () => {
  for (const route of ROUTES) {
    it(route.name, async () => {
      const got: Record<string, Record<string, number>> = {}
      const bodies: Array<{ kind: Kind; caller: CallerName; status: number; body: string }> = []
      for (const kind of KINDS) {
        got[kind] = {}
        for (const caller of CALLERS) {
          const res = await route.call(kind, caller)
          got[kind][caller] = res.status
          bodies.push({ kind, caller, status: res.status, body: await res.text() })
        }
      }
      expect(got).toEqual(route.expected)
      for (const { kind, caller, status, body } of bodies) {
        // 404 is empty; every other refusal is Forgejo's {message, url}.
        if (status === 404) expect(body).toBe("")
        if (status === 403 && caller === "publiconly") {
          expect(JSON.parse(body).message).toBe("token scope is limited to public repos")
        } else if (status === 403) expect(JSON.parse(body).message, `${kind} ${caller}`).toBe(route.refused)
        if (status === 423) expect(JSON.parse(body).message).toMatch(/^<Repository \d+:owner\/archived> is archived$/)
      }
    })
  }
})

describe("renamed repositories", () => {
  it("answers every route at the old name with a 307 to the new one, for whoever may see it", async () => {
    for (const name of ["before", "secret"]) {
      const created = await request(hearth, "POST", "/user/repos", basic("owner"), {
        name,
        private: name === "secret",
        auto_init: true
      })
      expect(created.status).toBe(201)
      const renamed = await request(hearth, "PATCH", `/repos/owner/${name}`, basic("owner"), { name: `${name}-now` })
      expect(renamed.status).toBe(200)
    }
    for (const [method, path, body] of [
      ["GET", "/repos/owner/before", undefined],
      ["PATCH", "/repos/owner/before", { description: "moved" }],
      ["POST", "/repos/owner/before/branches", { new_branch_name: "moved" }]
    ] as const) {
      const res = await fetch(hearth.api(path), {
        method,
        redirect: "manual",
        headers: { authorization: basic("owner"), "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      expect(res.status, `${method} ${path}`).toBe(307)
      expect(res.headers.get("location")).toBe(hearth.api(path.replace("/before", "/before-now")))
      expect(await res.text()).toBe("")
    }
    // The case of the old name does not matter; the query string is kept.
    const mixed = await fetch(hearth.api("/repos/Owner/BEFORE?x=1"), { redirect: "manual" })
    expect(mixed.status).toBe(307)
    expect(mixed.headers.get("location")).toBe(hearth.api("/repos/owner/before-now?x=1"))
    // A private repository's old name tells nobody who may not see it where it went.
    const hidden = await fetch(hearth.api("/repos/owner/secret"), { redirect: "manual" })
    expect(hidden.status).toBe(404)
    const shown = await fetch(hearth.api("/repos/owner/secret"), {
      redirect: "manual",
      headers: { authorization: basic("reader") }
    })
    expect(shown.status).toBe(404) // reader is no collaborator of `secret`
    const owner = await fetch(hearth.api("/repos/owner/secret"), {
      redirect: "manual",
      headers: { authorization: basic("owner") }
    })
    expect(owner.status).toBe(307)
  })
})

describe("the rule itself (repoRefusal)", () => {
  const opened = (name: string) =>
    hearth.run(
      Effect.gen(function* () {
        const repos = yield* ReposService
        const { owner, repo } = yield* repos.find("owner", name)
        return { owner, repo, access: { mode: "owner", code: "owner" } as const }
      })
    )

  it("answers a disabled unit with 404 before the role, and leaves code always on", async () => {
    expect((await request(hearth, "PATCH", "/repos/owner/public", basic("owner"), { has_issues: false })).status).toBe(
      200
    )
    const repo = await opened("public")
    const issues: RepoRule = { role: "read", unit: "issues" }
    expect(repoRefusal(undefined, repo, issues)).toMatchObject({ kind: "unit-disabled", reason: "not-found" })
    expect(repoRefusal(undefined, repo, { role: "read", unit: "pulls" })).toBeUndefined()
    expect(repoRefusal(undefined, repo, { role: "write", unit: "code", changes: "content" })).toBeUndefined()
    // A reader of the repository without the unit's right is refused with Forgejo's `reqRepoReader` words.
    const none = { ...repo, access: { mode: "read", code: "none" } as const }
    expect(repoRefusal(undefined, none, { role: "read", unit: "code" })).toMatchObject({
      kind: "role",
      reason: "forbidden",
      message: "user should have specific read permission or be a repo admin or a site admin"
    })
    expect((await request(hearth, "PATCH", "/repos/owner/public", basic("owner"), { has_issues: true })).status).toBe(
      200
    )
  })

  it("refuses changes while the repository is being created (409), settings and content alike", async () => {
    const repo = await opened("public")
    const creating = { ...repo, repo: { ...repo.repo, status: "creating" as const } }
    for (const changes of ["settings", "content"] as const) {
      expect(repoRefusal(undefined, creating, { role: "admin", changes })).toMatchObject({
        kind: "creating",
        reason: "conflict"
      })
    }
    expect(repoRefusal(undefined, creating, { role: "read" })).toBeUndefined()
  })
})

describe("the route table", () => {
  it("gives every route under /repos/{owner}/{repo} (and /user/starred/…) a repository rule, and no other route one", () => {
    const missing: Array<string> = []
    const extra: Array<string> = []
    for (const group of Object.values(HearthApi.groups) as ReadonlyArray<any>) {
      for (const endpoint of Object.values(group.endpoints) as ReadonlyArray<any>) {
        const rule = Context.get(endpoint.annotations, Access).repo
        const path: string = endpoint.path.replace(/^\/api\/v1/, "")
        const underRepo = path.startsWith("/repos/:owner/:repo")
        // /user/starred/{owner}/{repo} also takes remote handles: its service resolves local ones
        // with the same opener (SocialService.find → ReposService.assign).
        if (underRepo && rule === undefined) missing.push(`${endpoint.method} ${path}`)
        if (!underRepo && rule !== undefined) extra.push(`${endpoint.method} ${path}`)
      }
    }
    expect(missing).toEqual([])
    expect(extra).toEqual([])
  })
})

describe("unit switches and pull request settings (PATCH /repos/{o}/{r}, Repository JSON)", () => {
  const PULLS = {
    ignore_whitespace_conflicts: true,
    allow_merge_commits: false,
    allow_rebase: false,
    allow_rebase_explicit: true,
    allow_squash_merge: true,
    allow_fast_forward_only_merge: false,
    allow_rebase_update: false,
    default_delete_branch_after_merge: true,
    default_merge_style: "squash",
    default_update_style: "rebase",
    default_allow_maintainer_edit: true
  }

  it("shows Forgejo's defaults on a new repository", async () => {
    const created = await request(hearth, "POST", "/user/repos", basic("owner"), { name: "settings-new" })
    const body = await json(created)
    expectSwagger(body, "Repository")
    expect(body).toMatchObject({
      has_issues: true,
      has_wiki: true,
      has_pull_requests: true,
      has_projects: true,
      has_releases: true,
      has_packages: true,
      has_actions: false,
      ignore_whitespace_conflicts: false,
      allow_merge_commits: true,
      allow_rebase: true,
      allow_rebase_explicit: true,
      allow_squash_merge: true,
      allow_fast_forward_only_merge: true,
      allow_rebase_update: true,
      default_delete_branch_after_merge: false,
      default_merge_style: "merge",
      default_update_style: "merge",
      default_allow_maintainer_edit: false
    })
  })

  it("keeps what PATCH sets, and shows no merge settings while the pulls unit is off", async () => {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "settings" })).status).toBe(201)
    const units = { has_issues: false, has_wiki: false, has_projects: false, has_releases: false, has_packages: false }
    const patched = await request(hearth, "PATCH", "/repos/owner/settings", basic("owner"), {
      ...units,
      has_actions: true,
      ...PULLS
    })
    expect(patched.status).toBe(200)
    const body = await json(patched)
    expectSwagger(body, "Repository")
    expect(body).toMatchObject({ ...units, has_actions: true, has_pull_requests: true, ...PULLS })
    // Read back: stored, not only echoed.
    const read = await json(await request(hearth, "GET", "/repos/owner/settings", basic("owner")))
    expect(read).toMatchObject({ ...units, has_actions: true, ...PULLS })

    // Pulls off: Forgejo's convert.ToRepo shows every merge setting off and the "merge" style.
    const off = await json(
      await request(hearth, "PATCH", "/repos/owner/settings", basic("owner"), { has_pull_requests: false })
    )
    expectSwagger(off, "Repository")
    expect(off).toMatchObject({
      has_pull_requests: false,
      ignore_whitespace_conflicts: false,
      allow_merge_commits: false,
      allow_rebase_explicit: false,
      allow_squash_merge: false,
      default_delete_branch_after_merge: false,
      default_merge_style: "merge",
      default_update_style: "merge",
      default_allow_maintainer_edit: false
    })
    // …and back on, the stored settings again.
    const on = await json(
      await request(hearth, "PATCH", "/repos/owner/settings", basic("owner"), { has_pull_requests: true })
    )
    expect(on).toMatchObject({ has_pull_requests: true, ...PULLS })
  })

  it("refuses a merge or update style Forgejo does not know (422) and changes nothing", async () => {
    for (const [field, value, message] of [
      ["default_merge_style", "octopus", /^\[DefaultMergeStyle\]: must be one of merge, rebase, rebase-merge, squash/],
      ["default_update_style", "squash", /^\[DefaultUpdateStyle\]: must be one of merge, rebase: "squash"$/]
    ] as const) {
      const res = await request(hearth, "PATCH", "/repos/owner/settings", basic("owner"), {
        description: "not this",
        [field]: value
      })
      expect(res.status).toBe(422)
      expect((await json(res)).message).toMatch(message)
    }
    const read = await json(await request(hearth, "GET", "/repos/owner/settings", basic("owner")))
    expect(read.description).not.toBe("not this")
    expect(read.default_merge_style).toBe("squash")
  })
})
