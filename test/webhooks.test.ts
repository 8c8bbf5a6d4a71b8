// Webhook CRUD at every level (src/webhooks; Forgejo's routers/api/v1/{repo,org,user,admin}/hook.go,
// CONTRACT-WEBHOOKS §1.1–1.5): Forgejo's options, validation in its order and words, the `events`
// mapping, who may manage which hooks (repository admins, organization owners, the user's own,
// site admins) and 404 for what the caller may not see.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const call = (user: string, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, basic(user), body)
const hook = (extra: Record<string, unknown> = {}, config: Record<string, string> = {}) => ({
  type: "forgejo",
  config: { url: "http://127.0.0.1:9/hook", content_type: "json", ...config },
  ...extra
})

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  for (const username of ["alice", "bob", "carol", "writer"]) await createUser(hearth, { username })
  expect((await call("alice", "POST", "/user/repos", { name: "code", auto_init: true })).status).toBe(201)
  expect((await call("alice", "POST", "/user/repos", { name: "secret", private: true })).status).toBe(201)
  expect((await call("alice", "PUT", "/repos/alice/code/collaborators/writer", { permission: "write" })).status).toBe(
    204
  )
  expect((await call("alice", "POST", "/orgs", { username: "guild" })).status).toBe(201)
}, 120_000)
afterAll(() => hearth?.close())

describe("repository hooks", () => {
  it("create, list, get, edit, delete with Forgejo's shapes", async () => {
    const res = await call("alice", "POST", "/repos/alice/code/hooks", {
      ...hook(
        {
          events: ["push", "issues"],
          branch_filter: "{main,feature*}",
          active: true,
          authorization_header: "Bearer s3cr3t"
        },
        { secret: "shh" }
      )
    })
    expect(res.status).toBe(201)
    const created = await json(res)
    expect(created).toMatchObject({
      type: "forgejo",
      url: "http://127.0.0.1:9/hook",
      config: { url: "http://127.0.0.1:9/hook", content_type: "json" },
      content_type: "json",
      branch_filter: "{main,feature*}",
      events: ["push", "issues", "issue_assign", "issue_label", "issue_milestone", "issue_comment"],
      active: true,
      metadata: null
    })
    // Stored sealed; never answered in clear (the scheme shows which kind it is).
    expect(created.authorization_header).toBe("Bearer ******")
    expect(JSON.stringify(created)).not.toContain("shh")
    expect(JSON.stringify(created)).not.toContain("s3cr3t")

    const list = await call("alice", "GET", "/repos/alice/code/hooks")
    expect(list.status).toBe(200)
    expect(list.headers.get("x-total-count")).toBe("1")
    expect((await json(list)).map((h: any) => h.id)).toEqual([created.id])
    expect(await json(await call("alice", "GET", `/repos/alice/code/hooks/${created.id}`))).toEqual(created)

    // Forgejo's edit: events recomputed (omitted → push), branch_filter and authorization_header overwritten.
    const edited = await call("alice", "PATCH", `/repos/alice/code/hooks/${created.id}`, {
      config: { url: "http://127.0.0.1:9/other" },
      active: false
    })
    expect(edited.status).toBe(200)
    expect(await json(edited)).toMatchObject({
      url: "http://127.0.0.1:9/other",
      events: ["push"],
      branch_filter: "",
      authorization_header: "",
      active: false
    })
    expect((await call("alice", "DELETE", `/repos/alice/code/hooks/${created.id}`)).status).toBe(204)
    expect((await call("alice", "GET", `/repos/alice/code/hooks/${created.id}`)).status).toBe(404)
    expect((await call("alice", "DELETE", `/repos/alice/code/hooks/${created.id}`)).status).toBe(404)
  })

  it("new hooks are inactive unless `active` is sent; events names map as Forgejo's", async () => {
    const created = await json(
      await call(
        "alice",
        "POST",
        "/repos/alice/code/hooks",
        hook({ events: ["issues_only", "PULL_REQUEST_ONLY", "nonsense", "create"] })
      )
    )
    expect(created.active).toBe(false)
    expect(created.events).toEqual(["create", "issues", "pull_request"])
    const all = await json(await call("alice", "POST", "/repos/alice/code/hooks", hook({ events: ["pull_request"] })))
    expect(all.events).toEqual([
      "pull_request",
      "pull_request_assign",
      "pull_request_label",
      "pull_request_milestone",
      "pull_request_comment",
      "pull_request_review_approved",
      "pull_request_review_rejected",
      "pull_request_review_comment",
      "pull_request_sync",
      "pull_request_review_request"
    ])
    const none = await json(await call("alice", "POST", "/repos/alice/code/hooks", hook({ events: [] })))
    expect(none.events).toEqual(["push"])
  })

  it("refuses bad input with Forgejo's messages and stores nothing", async () => {
    const before = Number((await call("alice", "GET", "/repos/alice/code/hooks")).headers.get("x-total-count"))
    const cases: Array<[unknown, number, string]> = [
      [{ type: "", config: { url: "http://x.example/", content_type: "json" } }, 422, "[Type]: Required"],
      [
        { type: "forgejo", config: { url: "http://x.example/", content_type: "json" }, branch_filter: "[oops" },
        422,
        "[BranchFilter]"
      ],
      [
        { type: "Forgejo", config: { url: "http://x.example/", content_type: "json" } },
        422,
        "Invalid hook type: Forgejo"
      ],
      [{ type: "forgejo", config: { content_type: "json" } }, 422, "Missing config option: url"],
      [{ type: "forgejo", config: { url: "http://x.example/" } }, 422, "Missing config option: content_type"],
      [{ type: "forgejo", config: { url: "http://x.example/", content_type: "xml" } }, 422, "Invalid content type"],
      [{ type: "forgejo", config: { url: "ftp://x.example/", content_type: "json" } }, 422, "Invalid url"],
      [{ type: "forgejo", config: { url: "not a url", content_type: "json" } }, 422, "Invalid url"],
      [
        { type: "slack", config: { url: "http://x.example/", content_type: "json" } },
        422,
        "Missing config option: channel"
      ],
      [
        { type: "slack", config: { url: "http://x.example/", content_type: "json", channel: "No Spaces!" } },
        400,
        "Invalid slack channel name"
      ],
      [
        { type: "packagist", config: { url: "http://x.example/", content_type: "json" } },
        422,
        "Missing config option: package_url"
      ],
      [
        {
          type: "sourcehut_builds",
          config: { url: "http://x.example/", content_type: "json", manifest_path: "../x.yml" }
        },
        422,
        "Invalid manifest_path"
      ],
      [
        { type: "forgejo", config: { url: "http://x.example/", content_type: "json", is_system_webhook: "yes" } },
        422,
        "Invalid is_system_webhook value"
      ]
    ]
    for (const [body, status, message] of cases) {
      const res = await call("alice", "POST", "/repos/alice/code/hooks", body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect((await json(res)).message).toContain(message)
    }
    const missingConfig = await call("alice", "POST", "/repos/alice/code/hooks", { type: "forgejo" })
    expect(missingConfig.status).toBe(422)
    expect((await json(missingConfig)).message).toContain("config")
    expect(Number((await call("alice", "GET", "/repos/alice/code/hooks")).headers.get("x-total-count"))).toBe(before)
  })

  it("only repository admins manage hooks; others get 403, and a private repository is 404", async () => {
    expect((await call("writer", "GET", "/repos/alice/code/hooks")).status).toBe(403)
    const refused = await call("bob", "POST", "/repos/alice/code/hooks", hook())
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe(
      "user should be an owner or a collaborator with admin write of a repository"
    )
    expect((await call("bob", "GET", "/repos/alice/secret/hooks")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/code/hooks")).status).toBe(401)
    // A site admin may.
    expect((await call("siteadmin", "GET", "/repos/alice/code/hooks")).status).toBe(200)
  })

  it("a hook id of another repository is 404", async () => {
    const id = (await json(await call("alice", "POST", "/repos/alice/code/hooks", hook()))).id
    expect((await call("alice", "GET", `/repos/alice/secret/hooks/${id}`)).status).toBe(404)
    expect((await call("alice", "GET", "/repos/alice/code/hooks/abc")).status).toBe(404)
  })

  it("chat types keep their settings as metadata", async () => {
    const slack = await json(
      await call("alice", "POST", "/repos/alice/code/hooks", {
        type: "slack",
        config: { url: "http://x.example/", content_type: "json", channel: " #builds ", username: "bot", color: "good" }
      })
    )
    expect(slack.metadata).toEqual({ channel: "#builds", username: "bot", icon_url: "", color: "good" })
    expect(slack.config).toMatchObject({ channel: "#builds", username: "bot", icon_url: "", color: "good" })
    const discord = await json(
      await call("alice", "POST", "/repos/alice/code/hooks", {
        type: "discord",
        config: { url: "http://x.example/", content_type: "json", username: "forge" }
      })
    )
    expect(discord.metadata).toEqual({ username: "forge", icon_url: "" })
  })
})

describe("organization, user and site hooks", () => {
  it("organization hooks are for its owners", async () => {
    const res = await call("alice", "POST", "/orgs/guild/hooks", hook({ active: true }))
    expect(res.status).toBe(201)
    const created = await json(res)
    expect(await json(await call("alice", "GET", "/orgs/guild/hooks"))).toEqual([created])
    const refused = await call("bob", "GET", "/orgs/guild/hooks")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("Must be an organization owner")
    expect((await call("siteadmin", "GET", `/orgs/guild/hooks/${created.id}`)).status).toBe(200)
    expect((await call("alice", "GET", "/orgs/nosuchorg/hooks")).status).toBe(404)
    // Not reachable through another level.
    expect((await call("alice", "GET", `/user/hooks/${created.id}`)).status).toBe(404)
    expect((await call("alice", "PATCH", `/orgs/guild/hooks/${created.id}`, { events: ["create"] })).status).toBe(200)
    expect((await call("alice", "DELETE", `/orgs/guild/hooks/${created.id}`)).status).toBe(204)
  })

  it("user hooks are the caller's own", async () => {
    const created = await json(await call("bob", "POST", "/user/hooks", hook()))
    expect((await call("bob", "GET", `/user/hooks/${created.id}`)).status).toBe(200)
    expect((await call("carol", "GET", `/user/hooks/${created.id}`)).status).toBe(404)
    expect(await json(await call("carol", "GET", "/user/hooks"))).toEqual([])
    expect((await call("carol", "DELETE", `/user/hooks/${created.id}`)).status).toBe(404)
  })

  it("site hooks are for site admins; /admin/hooks lists the system hooks only", async () => {
    const refused = await call("alice", "GET", "/admin/hooks")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user should be the site admin")
    const system = await json(await call("siteadmin", "POST", "/admin/hooks", hook({}, { is_system_webhook: "true" })))
    const fallback = await json(await call("siteadmin", "POST", "/admin/hooks", hook()))
    const listed = await json(await call("siteadmin", "GET", "/admin/hooks"))
    expect(listed.map((h: any) => h.id)).toEqual([system.id])
    // A default hook is reached by id.
    expect((await call("siteadmin", "GET", `/admin/hooks/${fallback.id}`)).status).toBe(200)
    expect((await call("siteadmin", "PATCH", `/admin/hooks/${fallback.id}`, { active: true })).status).toBe(200)
    for (const id of [system.id, fallback.id])
      expect((await call("siteadmin", "DELETE", `/admin/hooks/${id}`)).status).toBe(204)
  })

  it("default hooks are copied into new repositories", async () => {
    const created = await json(
      await call("siteadmin", "POST", "/admin/hooks", hook({ active: true }, { url: "http://127.0.0.1:9/default" }))
    )
    expect((await call("carol", "POST", "/user/repos", { name: "fresh" })).status).toBe(201)
    const hooks = await json(await call("carol", "GET", "/repos/carol/fresh/hooks"))
    const copied = hooks.find((h: any) => h.url === "http://127.0.0.1:9/default")
    expect(copied).toBeDefined()
    expect(copied.id).not.toBe(created.id)
    expect(copied.active).toBe(true)
    expect((await call("siteadmin", "DELETE", `/admin/hooks/${created.id}`)).status).toBe(204)
  })
})

describe("events nobody hears", () => {
  const newJobs = async (action: () => Promise<void>) => {
    const ids = async () =>
      (await json(await call("siteadmin", "GET", "/admin/jobs?limit=50"))) as Array<{ id: number; kind: string }>
    const before = new Set((await ids()).map((j) => j.id))
    await action()
    return (await ids()).filter((j) => !before.has(j.id)).map((j) => j.kind)
  }

  it("are not queued for webhooks; events of a repository with an active hook are", async () => {
    const quiet = await newJobs(async () => {
      expect((await call("writer", "POST", "/user/repos", { name: "quiet" })).status).toBe(201)
    })
    expect(quiet).not.toContain("events-webhooks")
    const id = (
      await json(await call("writer", "POST", "/repos/writer/quiet/hooks", hook({ active: true, events: ["issues"] })))
    ).id
    const heard = await newJobs(async () => {
      expect((await call("writer", "POST", "/repos/writer/quiet/issues", { title: "heard" })).status).toBe(201)
    })
    expect(heard).toContain("events-webhooks")
    // Its hooks go (its own; a default hook copied into it, if a test above left one).
    const hooks = await json(await call("writer", "GET", "/repos/writer/quiet/hooks"))
    expect(hooks.map((h: any) => h.id)).toContain(id)
    for (const h of hooks)
      expect((await call("writer", "DELETE", `/repos/writer/quiet/hooks/${h.id}`)).status).toBe(204)
    const again = await newJobs(async () => {
      expect((await call("writer", "POST", "/repos/writer/quiet/issues", { title: "unheard" })).status).toBe(201)
    })
    expect(again).not.toContain("events-webhooks")
  })
})
