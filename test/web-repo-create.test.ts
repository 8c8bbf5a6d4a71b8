// Issue 17 in the browser's terms, over plain HTTP: the first account signed up on a new forge
// becomes its administrator (and only the first); a new repository from `/repo/create` in the
// user's account or an organization they may create in (templates for the first commit, refusals
// next to the field with what was typed kept, an owner not offered refused, one CreateRepository
// event); a fork into an organization from the fork page (one ForkRepository event, published by
// ForksService for the web and the API alike); the default branch chosen among the branches; a
// pending transfer cancelled by the owner.
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"

let hearth: Hearth
const seen: Array<Event> = []

beforeAll(async () => {
  hearth = await startHearth()
  const events = await hearth.run(Effect.service(EventHub))
  await hearth.run(events.subscribe({ name: "collector", handle: (event) => Effect.sync(() => void seen.push(event)) }))
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})
beforeEach(() => {
  seen.length = 0
})

const of = <T extends Event["_tag"]>(tag: T) => seen.filter((e): e is Extract<Event, { _tag: T }> => e._tag === tag)

const signedIn = async (options: { username?: string } = {}) => {
  const user = await createUser(hearth, options)
  const client = new WebClient(hearth.base)
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

const apiOrg = async (name: string, as: string) => await json(await request(hearth, "GET", `/orgs/${name}`, basic(as)))

/** The `<option>`s of a select, as [value, text]. */
const options = (page: string, name: string) => {
  const select = new RegExp(`<select[^>]*name="${name}"[^>]*>([\\s\\S]*?)</select>`).exec(page)?.[1] ?? ""
  return [...select.matchAll(/<option value="([^"]*)"( selected)?>([^<]*)<\/option>/g)].map((m) => ({
    value: m[1]!,
    text: m[3]!,
    selected: m[2] !== undefined
  }))
}

describe("the first account", () => {
  // Runs first: nobody exists yet on this server.
  it("signed up on an empty forge becomes an administrator; the next one does not", async () => {
    const first = new WebClient(hearth.base)
    const made = await first.submit("/user/sign_up", {
      user_name: "founder",
      email: "founder@example.com",
      password: "password123",
      retype: "password123"
    })
    expect(made.status).toBe(303)
    const second = new WebClient(hearth.base)
    expect(
      (
        await second.submit("/user/sign_up", {
          user_name: "second",
          email: "second@example.com",
          password: "password123",
          retype: "password123"
        })
      ).status
    ).toBe(303)
    const admin = json(await request(hearth, "GET", "/user", basic("founder")))
    expect((await admin).is_admin).toBe(true)
    expect((await json(await request(hearth, "GET", "/user", basic("second")))).is_admin).toBe(false)
    // The administrator may do what only administrators may.
    expect((await request(hearth, "GET", "/admin/users", basic("founder"))).status).toBe(200)
    expect((await request(hearth, "GET", "/admin/users", basic("second"))).status).toBe(403)
  })
})

describe("new repository", () => {
  it("asks visitors to sign in", async () => {
    const visitor = await new WebClient(hearth.base).get("/repo/create")
    expect(visitor.status).toBe(302)
    expect(visitor.location).toBe("/user/login?redirect_to=%2Frepo%2Fcreate")
  })

  it("creates one in the user's account with an initial commit from the templates", async () => {
    const { user, client } = await signedIn()
    const form = await client.get("/repo/create")
    expect(form.status).toBe(200)
    expect(form.text).toContain('data-testid="new-repository"')
    expect(options(form.text, "uid")).toEqual([{ value: String(user.id), text: user.name, selected: true }])
    expect(options(form.text, "license").map((o) => o.value)).toContain("MIT")
    const made = await client.post(
      "/repo/create",
      {
        uid: String(user.id),
        repo_name: "garden",
        description: "Plants & <weeds>",
        private: "on",
        auto_init: "on",
        license: "MIT",
        gitignores: "Node",
        issue_labels: "Default",
        default_branch: "trunk"
      },
      csrfOf(form.text)
    )
    expect(made.status).toBe(303)
    expect(made.location).toBe(`/${user.name}/garden`)
    const repo = await json(await request(hearth, "GET", `/repos/${user.name}/garden`, basic(user.name)))
    expect(repo).toMatchObject({
      private: true,
      description: "Plants & <weeds>",
      default_branch: "trunk",
      empty: false
    })
    const files = await json(await request(hearth, "GET", `/repos/${user.name}/garden/contents`, basic(user.name)))
    expect(files.map((f: { name: string }) => f.name).sort()).toEqual([".gitignore", "LICENSE", "README.md"])
    const labels = await json(await request(hearth, "GET", `/repos/${user.name}/garden/labels`, basic(user.name)))
    expect(labels.length).toBeGreaterThan(0)
    expect(of("CreateRepository").map((e) => [e.repo.ownerName, e.repo.name, e.doer.name])).toEqual([
      [user.name, "garden", user.name]
    ])
    expect((await client.get(`/${user.name}/garden`)).status).toBe(200)
  })

  it("refuses a taken or missing name and an unknown template next to the field, keeping what was typed", async () => {
    const { user, client } = await signedIn()
    expect((await request(hearth, "POST", "/user/repos", basic(user.name), { name: "taken" })).status).toBe(201)
    seen.length = 0
    const taken = await client.submit("/repo/create", { repo_name: "taken", description: "kept words" })
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('data-testid="error-repo_name"')
    expect(taken.text).toContain("kept words")
    const missing = await client.submit("/repo/create", { repo_name: "  " })
    expect(missing.status).toBe(422)
    expect(missing.text).toContain("A repository name is required.")
    const badName = await client.submit("/repo/create", { repo_name: "no spaces here" })
    expect(badName.status).toBe(422)
    expect(badName.text).toContain('data-testid="error-repo_name"')
    const badLicense = await client.submit("/repo/create", { repo_name: "lic", auto_init: "on", license: "NoSuch" })
    expect(badLicense.status).toBe(422)
    expect(badLicense.text).toContain('data-testid="error-license"')
    expect((await request(hearth, "GET", `/repos/${user.name}/lic`, basic(user.name))).status).toBe(404)
    expect(of("CreateRepository")).toEqual([])
  })

  it("offers the organizations the user may create in, and refuses any other owner", async () => {
    const { user, client } = await signedIn()
    const owner = await createUser(hearth)
    // `user` owns `mine`; in `theirs` they are in a team that may not create repositories.
    expect((await request(hearth, "POST", "/orgs", basic(user.name), { username: `mine-${user.id}` })).status).toBe(201)
    const theirs = `theirs-${user.id}`
    expect((await request(hearth, "POST", "/orgs", basic(owner.name), { username: theirs })).status).toBe(201)
    const team = await json(
      await request(hearth, "POST", `/orgs/${theirs}/teams`, basic(owner.name), {
        name: "readers",
        permission: "read",
        can_create_org_repo: false,
        units: ["repo.code"]
      })
    )
    expect((await request(hearth, "PUT", `/teams/${team.id}/members/${user.name}`, basic(owner.name))).status).toBe(204)
    const mine = await apiOrg(`mine-${user.id}`, user.name)
    const other = await apiOrg(theirs, user.name)

    const form = await client.get(`/repo/create?org=${mine.id}`)
    expect(options(form.text, "uid")).toEqual([
      { value: String(user.id), text: user.name, selected: false },
      { value: String(mine.id), text: mine.name, selected: true }
    ])
    const made = await client.post("/repo/create", { uid: String(mine.id), repo_name: "shared" }, csrfOf(form.text))
    expect(made.status).toBe(303)
    expect(made.location).toBe(`/${mine.name}/shared`)
    expect((await request(hearth, "GET", `/repos/${mine.name}/shared`, basic(user.name))).status).toBe(200)

    const refused = await client.post("/repo/create", { uid: String(other.id), repo_name: "sneaky" }, csrfOf(form.text))
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-uid"')
    expect((await request(hearth, "GET", `/repos/${theirs}/sneaky`, basic(owner.name))).status).toBe(404)
    // Nor someone else's account.
    const foreign = await client.post("/repo/create", { uid: String(owner.id), repo_name: "sneaky" }, csrfOf(form.text))
    expect(foreign.status).toBe(422)
    expect((await request(hearth, "GET", `/repos/${owner.name}/sneaky`, basic(owner.name))).status).toBe(404)
  })

  it("refuses a form without its CSRF token", async () => {
    const { user, client } = await signedIn()
    const res = await client.post("/repo/create", { repo_name: "nocsrf" }, undefined)
    expect(res.status).toBe(400)
    expect((await request(hearth, "GET", `/repos/${user.name}/nocsrf`, basic(user.name))).status).toBe(404)
  })
})

describe("fork into an organization", () => {
  it("offers the user's organizations and forks there, announcing it once", async () => {
    const source = await createUser(hearth)
    expect(
      (await request(hearth, "POST", "/user/repos", basic(source.name), { name: "seeds", auto_init: true })).status
    ).toBe(201)
    const { user, client } = await signedIn()
    const org = `forkers-${user.id}`
    expect((await request(hearth, "POST", "/orgs", basic(user.name), { username: org })).status).toBe(201)
    const orgRow = await apiOrg(org, user.name)
    seen.length = 0
    const form = await client.get(`/${source.name}/seeds/fork`)
    expect(options(form.text, "uid").map((o) => o.text)).toEqual([user.name, org])
    const made = await client.post(
      `/${source.name}/seeds/fork`,
      { uid: String(orgRow.id), repo_name: "seeds" },
      csrfOf(form.text)
    )
    expect(made.status).toBe(303)
    expect(made.location).toBe(`/${org}/seeds`)
    const fork = await json(await request(hearth, "GET", `/repos/${org}/seeds`, basic(user.name)))
    expect(fork).toMatchObject({ fork: true, parent: { full_name: `${source.name}/seeds` } })
    expect(of("ForkRepository").map((e) => [e.repo.ownerName, e.repo.name, e.doer.name, e.source.fullName])).toEqual([
      [org, "seeds", user.name, `${source.name}/seeds`]
    ])
    // The API's fork is announced once as well (ForksService publishes it, not the handler).
    seen.length = 0
    expect((await request(hearth, "POST", `/repos/${source.name}/seeds/forks`, basic(user.name), {})).status).toBe(202)
    expect(of("ForkRepository").map((e) => e.repo.ownerName)).toEqual([user.name])
    // An owner the user may not create in is refused next to the field.
    const stranger = await createUser(hearth)
    const refused = await client.post(
      `/${source.name}/seeds/fork`,
      { uid: String(stranger.id), repo_name: "seeds2" },
      csrfOf(form.text)
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-uid"')
    expect((await request(hearth, "GET", `/repos/${stranger.name}/seeds2`, basic(stranger.name))).status).toBe(404)
  }, 60_000)
})

describe("repository settings", () => {
  it("chooses the default branch among the branches", async () => {
    const { user, client } = await signedIn()
    expect(
      (await request(hearth, "POST", "/user/repos", basic(user.name), { name: "branched", auto_init: true })).status
    ).toBe(201)
    expect(
      (
        await request(hearth, "POST", `/repos/${user.name}/branched/branches`, basic(user.name), {
          new_branch_name: "develop"
        })
      ).status
    ).toBe(201)
    const page = await client.get(`/${user.name}/branched/settings`)
    expect(options(page.text, "default_branch")).toEqual([
      { value: "develop", text: "develop", selected: false },
      { value: "main", text: "main", selected: true }
    ])
    const done = await client.post(
      `/${user.name}/branched/settings`,
      { action: "update", repo_name: "branched", default_branch: "develop" },
      csrfOf(page.text)
    )
    expect(done.status).toBe(303)
    const repo = await json(await request(hearth, "GET", `/repos/${user.name}/branched`, basic(user.name)))
    expect(repo.default_branch).toBe("develop")
    const wrong = await client.post(
      `/${user.name}/branched/settings`,
      { action: "update", repo_name: "branched", default_branch: "nope" },
      csrfOf(page.text)
    )
    expect(wrong.status).toBe(422)
    expect(wrong.text).toContain('data-testid="error-default_branch"')
    // An empty repository's default branch is typed: there is nothing to choose from.
    expect((await request(hearth, "POST", "/user/repos", basic(user.name), { name: "bare" })).status).toBe(201)
    const bare = await client.get(`/${user.name}/bare/settings`)
    expect(bare.text).toMatch(/<input[^>]*name="default_branch"/)
  })

  it("cancels a pending transfer (owner only)", async () => {
    const { user, client } = await signedIn()
    const recipient = await createUser(hearth)
    expect((await request(hearth, "POST", "/user/repos", basic(user.name), { name: "moving" })).status).toBe(201)
    const started = await client.submit(`/${user.name}/moving/settings`, {
      action: "transfer",
      new_owner_name: recipient.name,
      transfer_confirm: `${user.name}/moving`
    })
    expect(started.location).toBe(`/${user.name}/moving/settings?done=transfer-pending`)
    const pending = await client.get(started.location!)
    expect(pending.text).toContain('data-testid="danger-cancel_transfer"')
    // A repository admin who is not the owner may not cancel it.
    const admin = await signedIn()
    expect(
      (
        await request(hearth, "PUT", `/repos/${user.name}/moving/collaborators/${admin.user.name}`, basic(user.name), {
          permission: "admin"
        })
      ).status
    ).toBe(204)
    const notOwner = await admin.client.submit(`/${user.name}/moving/settings`, { action: "cancel_transfer" })
    expect(notOwner.status).toBe(403)
    const before = await json(await request(hearth, "GET", `/repos/${user.name}/moving`, basic(user.name)))
    expect(before.repo_transfer?.recipient?.login).toBe(recipient.name)

    const cancelled = await client.submit(`/${user.name}/moving/settings`, { action: "cancel_transfer" })
    expect(cancelled.status).toBe(303)
    expect(cancelled.location).toBe(`/${user.name}/moving/settings?done=transfer-cancelled`)
    const after = await json(await request(hearth, "GET", `/repos/${user.name}/moving`, basic(user.name)))
    expect(after.repo_transfer ?? null).toBeNull()
    expect(after.owner.login).toBe(user.name)
    // The recipient has nothing left to accept.
    expect(
      (await request(hearth, "POST", `/repos/${user.name}/moving/transfer/accept`, basic(recipient.name))).status
    ).toBe(404)
    expect((await client.get(`/${user.name}/moving/settings`)).text).toContain('data-testid="danger-transfer"')
  })
})
