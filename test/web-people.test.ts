// Issue 17 items 2 and 4 over plain HTTP: profiles at /{owner} (a user's fields and tabs, an
// organization's repositories and members), the API's visibility rules on them (a 404 page for
// who may not see an account, private repositories and memberships hidden), following from the
// profile (CSRF, blocks), the routes /{owner} must not shadow, the federation links (the actor URL
// asked for HTML redirects to the profile; `rel="me"` and the ActivityPub alternate link) and the
// XSS corpus in every field a profile shows.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let adminToken: string
const web = () => new WebClient(hearth.base)

beforeAll(async () => {
  hearth = await startHearth({ ui: { EXPLORE_PAGING_NUM: "3" } })
  await createUser(hearth, { username: "root", isAdmin: true })
  adminToken = await createToken(hearth, "root")
}, 120_000)
afterAll(() => hearth?.close())

const admin = (method: string, path: string, body?: unknown) =>
  request(hearth, method, path, `token ${adminToken}`, body)

/** Sets profile fields through the admin API (the settings pages have their own tests). */
const edit = async (name: string, fields: Record<string, unknown>) => {
  const res = await admin("PATCH", `/admin/users/${name}`, { login_name: name, source_id: 0, ...fields })
  expect(res.status, await res.clone().text()).toBe(200)
}

const signedIn = async (name: string) => {
  const client = web()
  expect((await client.signIn(name)).status).toBe(303)
  return client
}

const repo = async (owner: string, name: string, options: Record<string, unknown> = {}) => {
  const res = await request(hearth, "POST", "/user/repos", basic(owner), { name, ...options })
  expect(res.status).toBe(201)
}

describe("what /{owner} must not shadow", () => {
  it("explore, the account pages, assets, the API, key exports and WebFinger still answer as before", async () => {
    const user = await createUser(hearth, { username: "shadow-check" })
    const explore = await web().get("/explore")
    expect(explore.status).toBe(302)
    expect(explore.location).toBe("/explore/repos")
    expect((await web().get("/explore/repos")).status).toBe(200)
    expect((await web().get("/user/login")).text).toContain('data-testid="login-form"')
    const css = /href="(\/assets\/hearth\.[^"]+)"/.exec((await web().get("/user/login")).text)![1]!
    expect((await fetch(`${hearth.base}${css}`)).headers.get("content-type")).toContain("text/css")
    // /api itself stays the API's empty 404, for every method and also under a profile-like name.
    for (const method of ["GET", "POST", "DELETE"]) {
      const res = await fetch(`${hearth.base}/api`, { method })
      expect(res.status, method).toBe(404)
      expect(await res.text(), method).toBe("")
    }
    expect((await fetch(`${hearth.base}/api/v1/version`)).status).toBe(200)
    const gpg = await fetch(`${hearth.base}/${user.name}.gpg`)
    expect(gpg.status).toBe(200)
    expect(gpg.headers.get("content-type")).toContain("text/plain")
    const finger = await fetch(
      `${hearth.base}/.well-known/webfinger?resource=acct:${user.name}@${new URL(hearth.base).host}`
    )
    expect(finger.status).toBe(200)
    expect(finger.headers.get("content-type")).toContain("application/jrd+json")
    // An unknown name is the styled 404 page; a POST to one (signed out) asks to sign in.
    const unknown = await web().get("/nobody-here")
    expect(unknown.status).toBe(404)
    expect(unknown.text).toContain("Page not found")
    // A target that does not decode is refused before routing (422), never a server error.
    expect((await web().get("/%ZZ")).status).toBe(422)
    const page = await web().get(`/${user.name}`)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
  })
})

describe("a user's profile", () => {
  it("shows the profile's fields, followers and following, and the join date", async () => {
    const user = await createUser(hearth, { username: "ada", fullName: "Ada Lovelace" })
    await edit("ada", {
      description: "Analyst of engines",
      location: "London",
      website: "https://social.example/@ada",
      pronouns: "she/her"
    })
    const fan = await createUser(hearth, { username: "ada-fan" })
    expect((await request(hearth, "PUT", "/user/following/ada", basic(fan.name))).status).toBe(204)
    const page = await web().get("/ada")
    expect(page.status).toBe(200)
    expect(page.text).toContain("<title>Ada Lovelace (ada) - Hearth</title>")
    expect(page.text).toMatch(/data-testid="full-name">Ada Lovelace</)
    expect(page.text).toMatch(/data-testid="pronouns">she\/her</)
    expect(page.text).toMatch(/data-testid="bio">Analyst of engines</)
    expect(page.text).toContain("London")
    expect(page.text).toMatch(/data-testid="followers-count">1</)
    expect(page.text).toMatch(/data-testid="following-count">0</)
    expect(page.text).toContain(`Joined on ${user.createdAt.toISOString().slice(0, 10)}`)
    // The e-mail only for signed-in viewers (the account does not hide it).
    expect(page.text).not.toContain(user.email)
    expect((await (await signedIn(fan.name)).get("/ada")).text).toContain(`mailto:${user.email}`)
    await edit("ada", { hide_email: true })
    expect((await (await signedIn(fan.name)).get("/ada")).text).not.toContain(user.email)
  })

  it("lists repositories with search and pages, stars, followers and following (Forgejo's ?tab= names)", async () => {
    const owner = await createUser(hearth, { username: "lister" })
    for (const name of ["alpha", "beta", "gamma", "delta"]) await repo(owner.name, name)
    await repo(owner.name, "hidden-one", { private: true })
    const other = await createUser(hearth, { username: "lister-friend" })
    await repo(other.name, "starred-thing")
    expect((await request(hearth, "PUT", "/user/starred/lister-friend/starred-thing", basic(owner.name))).status).toBe(
      204
    )
    expect((await request(hearth, "PUT", "/user/following/lister-friend", basic(owner.name))).status).toBe(204)

    // Three a page (EXPLORE_PAGING_NUM), sorted, with a next link that keeps the tab and query.
    const first = await web().get("/lister?sort=alphabetically")
    expect(first.text).toMatch(/data-testid="tab-repositories"[^>]*|aria-current="page" data-testid="tab-repositories"/)
    const names = [...first.text.matchAll(/href="\/lister\/([^"]+)"/g)].map((m) => m[1])
    expect(names).toEqual(["alpha", "beta", "delta"])
    const next = /rel="next" href="([^"]+)"/.exec(first.text)![1]!.replaceAll("&amp;", "&")
    expect(next).toBe("/lister?sort=alphabetically&page=2")
    const second = await web().get(next)
    expect([...second.text.matchAll(/href="\/lister\/([^"]+)"/g)].map((m) => m[1])).toEqual(["gamma"])
    // The private repository only for its owner.
    expect((await web().get("/lister?q=hidden")).text).not.toContain("hidden-one")
    expect((await (await signedIn(owner.name)).get("/lister?q=hidden")).text).toContain('href="/lister/hidden-one"')
    const search = await web().get("/lister?q=gam")
    expect(search.text).toContain('href="/lister/gamma"')
    expect(search.text).not.toContain('href="/lister/alpha"')

    const stars = await web().get("/lister?tab=stars")
    expect(stars.text).toContain('href="/lister-friend/starred-thing"')
    expect(stars.text).toMatch(/aria-current="page" data-testid="tab-stars"/)
    expect(stars.text).not.toContain('href="/lister/alpha"')
    expect(stars.text).toContain('name="tab" value="stars"')
    const following = await web().get("/lister?tab=following")
    expect(following.text).toContain('href="/lister-friend"')
    const followers = await web().get("/lister-friend?tab=followers")
    expect(followers.text).toContain('href="/lister"')
    expect((await web().get("/lister-friend?tab=following")).text).toContain("does not follow anyone yet")
  })

  it("follows the API's visibility: private and limited accounts are a 404 page for who may not see them", async () => {
    const hidden = await createUser(hearth, { username: "hermit", visibility: "private" })
    await createUser(hearth, { username: "members-only", visibility: "limited" })
    const stranger = await createUser(hearth, { username: "stranger" })
    const restricted = await createUser(hearth, { username: "restricted-one", restricted: true })
    for (const [who, path, status] of [
      [undefined, "/hermit", 404],
      [stranger.name, "/hermit", 404],
      [hidden.name, "/hermit", 200],
      ["root", "/hermit", 200],
      [undefined, "/members-only", 404],
      [restricted.name, "/members-only", 404],
      [stranger.name, "/members-only", 200]
    ] as const) {
      const client = who === undefined ? web() : await signedIn(who)
      const res = await client.get(path)
      expect(res.status, `${who} ${path}`).toBe(status)
      if (status === 404) {
        expect(res.text).toContain("Page not found")
        expect(/<main[\s\S]*<\/main>/.exec(res.text)![0]).not.toContain("hermit")
      }
    }
    // Nor do hidden accounts show up in someone's followers.
    expect((await request(hearth, "PUT", "/user/following/stranger", basic(hidden.name))).status).toBe(204)
    expect((await web().get("/stranger?tab=followers")).text).not.toContain('href="/hermit"')
    expect((await (await signedIn("root")).get("/stranger?tab=followers")).text).toContain('href="/hermit"')
  })
})

describe("an organization's profile", () => {
  it("shows its repositories and the members the viewer may see", async () => {
    const owner = await createUser(hearth, { username: "org-owner" })
    const quiet = await createUser(hearth, { username: "quiet-member" })
    const outsider = await createUser(hearth, { username: "org-outsider" })
    const created = await request(hearth, "POST", "/orgs", basic(owner.name), {
      username: "guild",
      full_name: "The Guild",
      description: "Makers of things"
    })
    expect(created.status).toBe(201)
    const teams = (await json(await request(hearth, "GET", "/orgs/guild/teams", basic(owner.name)))) as Array<{
      id: number
    }>
    expect(
      (await request(hearth, "PUT", `/teams/${teams[0]!.id}/members/${quiet.name}`, basic(owner.name))).status
    ).toBe(204)
    expect((await request(hearth, "PUT", `/orgs/guild/public_members/${owner.name}`, basic(owner.name))).status).toBe(
      204
    )
    expect((await request(hearth, "POST", "/orgs/guild/repos", basic(owner.name), { name: "open-tool" })).status).toBe(
      201
    )
    expect(
      (await request(hearth, "POST", "/orgs/guild/repos", basic(owner.name), { name: "secret-tool", private: true }))
        .status
    ).toBe(201)

    const anonymous = await web().get("/guild")
    expect(anonymous.status).toBe(200)
    expect(anonymous.text).toContain("The Guild")
    expect(anonymous.text).toContain("Makers of things")
    expect(anonymous.text).toContain('href="/guild/open-tool"')
    expect(anonymous.text).not.toContain("secret-tool")
    // Public memberships only, for those outside.
    expect(anonymous.text).toContain('href="/org-owner"')
    expect(anonymous.text).not.toContain('href="/quiet-member"')
    expect(anonymous.text).toMatch(/data-testid="members-count">1</)
    expect((await (await signedIn(outsider.name)).get("/guild")).text).not.toContain('href="/quiet-member"')
    // Members see every member and the private repository.
    const inside = await (await signedIn(quiet.name)).get("/guild")
    expect(inside.text).toContain('href="/quiet-member"')
    expect(inside.text).toMatch(/data-testid="members-count">2</)
    expect(inside.text).toContain('href="/guild/secret-tool"')
    // No follow button on an organization; a follow POST to it is a 404.
    expect(inside.text).not.toContain('data-testid="follow-form"')

    // A private organization is a 404 page for outsiders.
    expect((await request(hearth, "PATCH", "/orgs/guild", basic(owner.name), { visibility: "private" })).status).toBe(
      200
    )
    expect((await web().get("/guild")).status).toBe(404)
    expect((await (await signedIn(outsider.name)).get("/guild")).status).toBe(404)
    expect((await (await signedIn(quiet.name)).get("/guild")).status).toBe(200)
  })
})

describe("following from the profile", () => {
  it("follows and unfollows with the form; needs the CSRF token and a signed-in viewer", async () => {
    const star = await createUser(hearth, { username: "celebrity" })
    const fan = await createUser(hearth, { username: "devotee" })
    const client = await signedIn(fan.name)
    const page = await client.get("/celebrity")
    expect(page.text).toContain('data-testid="follow-form"')
    expect(page.text).toContain('name="action" value="follow"')
    // Without the token, or signed out: nothing changes.
    expect((await client.post("/celebrity", { action: "follow" }, undefined)).status).toBe(400)
    const anonymous = web()
    const signedOut = await anonymous.post(
      "/celebrity",
      { action: "follow" },
      csrfOf((await anonymous.get("/user/login")).text)
    )
    expect(signedOut.status).toBe(303)
    expect(signedOut.location).toBe("/user/login?redirect_to=%2Fcelebrity")
    expect((await request(hearth, "GET", "/user/following/celebrity", basic(fan.name))).status).toBe(404)

    const followed = await client.post("/celebrity", { action: "follow" }, csrfOf(page.text))
    expect(followed.status).toBe(303)
    expect(followed.location).toBe("/celebrity")
    expect((await request(hearth, "GET", "/user/following/celebrity", basic(fan.name))).status).toBe(204)
    const after = await client.get("/celebrity")
    expect(after.text).toContain('name="action" value="unfollow"')
    expect(after.text).toMatch(/data-testid="followers-count">1</)
    expect((await client.post("/celebrity", { action: "unfollow" }, csrfOf(after.text))).status).toBe(303)
    expect((await request(hearth, "GET", "/user/following/celebrity", basic(fan.name))).status).toBe(404)
    // No button on one's own page; following oneself is refused with the API's message.
    const own = await client.get(`/${fan.name}`)
    expect(own.text).not.toContain('data-testid="follow-form"')
    const self = await client.post(`/${fan.name}`, { action: "follow" }, csrfOf(own.text))
    expect(self.status).toBe(422)
    expect(self.text).toContain("you cannot follow yourself")
    expect((await client.post("/celebrity", { action: "dance" }, csrfOf(own.text))).status).toBe(400)
    expect(star.id).toBeGreaterThan(0)
  })

  it("honours blocks, either way: no button, and the POST is refused", async () => {
    const blocker = await createUser(hearth, { username: "blocker" })
    const pest = await createUser(hearth, { username: "pest" })
    expect((await request(hearth, "PUT", "/user/block/pest", basic(blocker.name))).status).toBe(204)
    for (const [who, target] of [
      [pest.name, blocker.name],
      [blocker.name, pest.name]
    ] as const) {
      const client = await signedIn(who)
      const page = await client.get(`/${target}`)
      expect(page.status).toBe(200)
      expect(page.text, who).not.toContain('data-testid="follow-form"')
      const refused = await client.post(`/${target}`, { action: "follow" }, csrfOf(page.text))
      expect(refused.status, who).toBe(403)
      expect(refused.text).toContain("You cannot follow this user: one of you has blocked the other.")
      expect((await request(hearth, "GET", `/user/following/${target}`, basic(who))).status).toBe(404)
    }
  })

  it("a hidden account cannot be followed from the web either (404)", async () => {
    await createUser(hearth, { username: "recluse", visibility: "private" })
    const client = await signedIn((await createUser(hearth)).name)
    const csrf = csrfOf((await client.get("/")).text)
    expect((await client.post("/recluse", { action: "follow" }, csrf)).status).toBe(404)
  })
})

describe("federation", () => {
  it("the actor URL asked for HTML redirects to the profile; ActivityPub clients still get the Person", async () => {
    const user = await createUser(hearth, { username: "fedi-person" })
    const actor = `${hearth.base}/api/v1/activitypub/user/fedi-person`
    for (const accept of [
      "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
      "text/html",
      "application/activity+json;q=0.5, text/html"
    ]) {
      const res = await fetch(actor, { headers: { accept }, redirect: "manual" })
      expect(res.status, accept).toBe(302)
      expect(res.headers.get("location"), accept).toBe(`${hearth.base}/fedi-person`)
      expect(res.headers.get("vary")).toBe("Accept")
    }
    const byId = await fetch(`${hearth.base}/api/v1/activitypub/user-id/${user.id}`, {
      headers: { accept: "text/html" },
      redirect: "manual"
    })
    expect(byId.status).toBe(302)
    expect(byId.headers.get("location")).toBe(`${hearth.base}/fedi-person`)
    for (const accept of [
      "application/activity+json",
      'application/ld+json; profile="https://www.w3.org/ns/activitystreams"',
      "application/activity+json, text/html;q=0.1",
      "*/*",
      undefined
    ]) {
      const res = await fetch(actor, { headers: accept === undefined ? {} : { accept }, redirect: "manual" })
      expect(res.status, accept).toBe(200)
      expect(res.headers.get("content-type"), accept).toContain("application/activity+json")
      const person = (await res.json()) as { type: string; id: string; url: string }
      expect(person.type).toBe("Person")
      expect(person.id).toBe(actor)
      expect(person.url).toBe(`${hearth.base}/fedi-person`)
    }
    // Someone unknown, or not federated, is still a 404 whatever the Accept.
    expect(
      (await fetch(`${hearth.base}/api/v1/activitypub/user/nobody-at-all`, { headers: { accept: "text/html" } })).status
    ).toBe(404)
  })

  it("the profile carries the ActivityPub alternate link and rel=me on the website, so Mastodon verifies it", async () => {
    await createUser(hearth, { username: "mastodonian" })
    await edit("mastodonian", { website: "https://mastodon.example/@mastodonian" })
    const page = await web().get("/mastodonian")
    expect(page.text).toContain(
      `<link rel="alternate" type="application/activity+json" href="${hearth.base}/api/v1/activitypub/user/mastodonian">`
    )
    expect(page.text).toContain('<link rel="me" href="https://mastodon.example/@mastodonian">')
    expect(page.text).toContain(
      '<a rel="me nofollow noopener noreferrer" href="https://mastodon.example/@mastodonian">'
    )
    // What the alternate link names is the Person.
    const href = /rel="alternate" type="application\/activity\+json" href="([^"]+)"/.exec(page.text)![1]!
    const person = (await (await fetch(href, { headers: { accept: "application/activity+json" } })).json()) as {
      preferredUsername: string
      attachment: { type: string; name: string; value: string }
    }
    expect(person.preferredUsername).toBe("mastodonian")
    // The Person carries the website as a profile field, as Mastodon shows one.
    expect(person.attachment).toEqual({
      type: "PropertyValue",
      name: "Website",
      value:
        '<a href="https://mastodon.example/@mastodonian" rel="me nofollow noopener noreferrer" target="_blank">https://mastodon.example/@mastodonian</a>'
    })

    // An account that does not federate (limited) has no actor to point at.
    const limited = await createUser(hearth, { username: "not-federated", visibility: "limited" })
    const viewer = await signedIn(limited.name)
    expect((await viewer.get("/not-federated")).text).not.toContain("application/activity+json")
    // A website that is no http(s) URL is text, not a link.
    await edit("mastodonian", { website: "" })
    expect((await web().get("/mastodonian")).text).not.toContain('rel="me"')
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("names, bios, locations, pronouns and websites from the corpus are text on profiles and in lists", async () => {
    const target = await createUser(hearth, { username: "xss-target" })
    for (let i = 0; i < corpus.length; i += 6) {
      const name = `xss-people-${i}`
      await createUser(hearth, { username: name, fullName: corpus[i]!.slice(0, 100) })
      await edit(name, {
        description: corpus
          .slice(i, i + 3)
          .join("\n")
          .slice(0, 255),
        location: corpus[i + 3]?.slice(0, 50) ?? "",
        pronouns: corpus[i + 4]?.slice(0, 50) ?? ""
      })
      expect((await request(hearth, "PUT", `/user/following/${target.name}`, basic(name))).status).toBe(204)
      const page = await web().get(`/${name}`)
      expect(page.status).toBe(200)
      expect(executable(page.text), name).toEqual([])
    }
    // The profile lists followers with their hostile full names.
    let path: string | undefined = `/${target.name}?tab=followers`
    let rows = 0
    while (path !== undefined) {
      const page = await web().get(path)
      expect(executable(page.text), path).toEqual([])
      rows += (page.text.match(/class="Box-row/g) ?? []).length
      path = /rel="next" href="([^"]+)"/.exec(page.text)?.[1]?.replaceAll("&amp;", "&")
    }
    expect(rows).toBe(Math.ceil(corpus.length / 6))
    const first = await web().get("/xss-people-0")
    expect(first.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    // A website is stored only as an http(s) URL; one crafted to leave its attribute stays inside it.
    await edit("xss-people-0", { website: 'https://e.example/"><script>alert(1)</script>' })
    const crafted = await web().get("/xss-people-0")
    expect(executable(crafted.text)).toEqual([])
    expect(crafted.text).not.toContain('"><script>')
  }, 120_000)
})
