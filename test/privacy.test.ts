// Privacy (issue 15, items 2 and 3): a hidden e-mail address never leaves the account — commits
// Hearth writes for it carry its no-reply address, and no user or commit JSON shows the real one to
// anyone but the account and site admins —, and a private (or limited) account is invisible on
// every `/users/{name}/…` route to whoever may not see it: the same empty 404 as an unknown name.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
const tokens: Record<string, string> = {}

const REAL = "hidey@example.com"
/** `{lowercase login}@{NO_REPLY_ADDRESS}`: the login is "Hidey". */
let noReply: string
const b64 = (text: string) => Buffer.from(text).toString("base64")
const ok = async (res: Response, status: number) => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${await res.text()}`)
  return res
}

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-privacy-"))
  noReply = `hidey@${hearth.settings.service.NO_REPLY_ADDRESS}`
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "Hidey", fullName: "Hidey <H> Hider", email: REAL })
  await createUser(hearth, { username: "olga" })
  await createUser(hearth, { username: "rita", restricted: true })
  await createUser(hearth, { username: "ghosty", visibility: "private" })
  await createUser(hearth, { username: "limmy", visibility: "limited" })
  // Through the admin API, as a site admin would (Forgejo's `hide_email` is `keep_email_private`).
  await ok(
    await request(hearth, "PATCH", "/admin/users/Hidey", basic("root"), {
      login_name: "Hidey",
      source_id: 0,
      hide_email: true
    }),
    200
  )
  for (const name of ["root", "Hidey", "olga", "rita", "ghosty", "limmy"])
    tokens[name] = await createToken(hearth, name)
  tokens.publicOnly = await createToken(hearth, "olga", ["all", "public-only"])
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("a hidden e-mail address in the commits Hearth writes (item 2)", () => {
  let autoInit: string
  beforeAll(async () => {
    await ok(
      await request(hearth, "POST", "/user/repos", basic("Hidey"), {
        name: "auto",
        auto_init: true,
        readme: "Default"
      }),
      201
    )
    autoInit = (await json(await request(hearth, "GET", "/repos/Hidey/auto/commits/main", basic("Hidey")))).sha
    const path = (p: string) => `/repos/Hidey/auto/contents/${p}`
    await ok(
      await request(hearth, "POST", path("one.txt"), basic("Hidey"), { content: b64("1\n"), message: "create" }),
      201
    )
    const sha = (await json(await request(hearth, "GET", path("one.txt"), basic("Hidey")))).sha
    await ok(
      await request(hearth, "PUT", path("one.txt"), basic("Hidey"), { content: b64("2\n"), sha, message: "update" }),
      200
    )
    const sha2 = (await json(await request(hearth, "GET", path("one.txt"), basic("Hidey")))).sha
    await ok(await request(hearth, "DELETE", path("one.txt"), basic("Hidey"), { sha: sha2, message: "delete" }), 200)
    await ok(
      await request(hearth, "POST", "/repos/Hidey/auto/contents", basic("Hidey"), {
        message: "several",
        files: [
          { operation: "create", path: "a.txt", content: b64("a") },
          { operation: "create", path: "b.txt", content: b64("b") }
        ]
      }),
      201
    )
    // An identity given in the body is used as given (Forgejo), also by a hidden-e-mail account.
    await ok(
      await request(hearth, "POST", path("given.txt"), basic("Hidey"), {
        content: b64("g"),
        message: "given",
        author: { name: "Work Me", email: "hidey-work@example.org" }
      }),
      201
    )
  })

  it("writes the no-reply address and the header-safe full name: auto-init and every contents-API commit (real git log)", async () => {
    const local = join(work, "auto")
    await gitIn(work, ["clone", "--quiet", `${hearth.base}/Hidey/auto.git`, local])
    const log = (await gitIn(local, ["log", "--format=%s|%an <%ae>|%cn <%ce>"])).split("\n")
    const me = `Hidey H Hider <${noReply}>`
    expect(log).toEqual([
      `given|Work Me <hidey-work@example.org>|Work Me <hidey-work@example.org>`,
      `several|${me}|${me}`,
      `delete|${me}|${me}`,
      `update|${me}|${me}`,
      `create|${me}|${me}`,
      `Initial commit|${me}|${me}`
    ])
    expect(await gitIn(local, ["log", "--all", "--format=%ae %ce %B"])).not.toContain(REAL)
  })

  it("shows the no-reply address in the commits API, attributed to the account", async () => {
    const commit = await json(await request(hearth, "GET", `/repos/Hidey/auto/git/commits/${autoInit}`))
    expect(commit.commit.author).toMatchObject({ name: "Hidey H Hider", email: noReply })
    expect(commit.commit.committer).toMatchObject({ name: "Hidey H Hider", email: noReply })
    // The no-reply address belongs to the account (Forgejo's GetUserByEmail), shown as the viewer may see it.
    expect(commit.author).toMatchObject({ login: "Hidey", email: noReply })
    expect(commit.committer).toMatchObject({ login: "Hidey", email: noReply })
    const asSelf = await json(await request(hearth, "GET", `/repos/Hidey/auto/git/commits/${autoInit}`, basic("Hidey")))
    expect(asSelf.author).toMatchObject({ login: "Hidey", email: REAL })
    const asAdmin = await json(await request(hearth, "GET", `/repos/Hidey/auto/commits/${autoInit}`, basic("root")))
    expect(asAdmin.author).toMatchObject({ login: "Hidey", email: REAL })
    expect(asAdmin.commit.author.email).toBe(noReply)
  })

  it("keeps the real address out of every user and commit JSON shown to others; the account and admins see it", async () => {
    // Relations that put the account into lists elsewhere.
    await ok(await request(hearth, "POST", "/user/repos", basic("olga"), { name: "pub", auto_init: true }), 201)
    await ok(await request(hearth, "PUT", "/user/following/olga", basic("Hidey")), 204)
    await ok(await request(hearth, "PUT", "/user/following/Hidey", basic("olga")), 204)
    await ok(await request(hearth, "PUT", "/user/starred/olga/pub", basic("Hidey")), 204)
    await ok(await request(hearth, "PUT", "/repos/olga/pub/subscription", basic("Hidey")), 200)
    await ok(
      await request(hearth, "PUT", "/repos/olga/pub/collaborators/Hidey", basic("olga"), { permission: "write" }),
      204
    )
    await ok(await request(hearth, "POST", "/orgs", basic("olga"), { username: "guild" }), 201)
    const team = await json(
      await request(hearth, "POST", "/orgs/guild/teams", basic("olga"), {
        name: "crew",
        permission: "read",
        units: ["repo.code"]
      })
    )
    await ok(await request(hearth, "PUT", `/teams/${team.id}/members/Hidey`, basic("olga")), 204)
    await ok(await request(hearth, "PUT", "/orgs/guild/public_members/Hidey", basic("Hidey")), 204)

    const paths = [
      "/users/Hidey",
      "/users/search?q=hid",
      "/users/search?q=hidey%40example",
      "/users/Hidey/repos",
      "/users/Hidey/followers",
      "/users/Hidey/following",
      "/users/olga/followers",
      "/users/olga/following",
      "/repos/search?q=auto",
      "/repos/Hidey/auto",
      "/repos/olga/pub/stargazers",
      "/repos/olga/pub/subscribers",
      "/repos/olga/pub/collaborators",
      "/repos/olga/pub/collaborators/Hidey/permission",
      "/orgs/guild/members",
      "/orgs/guild/public_members",
      `/teams/${team.id}/members`,
      "/repos/Hidey/auto/commits",
      "/repos/Hidey/auto/commits/main",
      `/repos/Hidey/auto/git/commits/${autoInit}`,
      "/repos/Hidey/auto/branches",
      "/repos/Hidey/auto/branches/main",
      "/repos/Hidey/auto/contents/README.md"
    ]
    const refused: Array<string> = []
    for (const auth of [undefined, basic("olga")]) {
      for (const path of paths) {
        const res = await request(hearth, "GET", path, auth)
        const text = await res.text()
        if (res.status !== 200) refused.push(`${auth === undefined ? "anonymous" : "olga"} ${path} ${res.status}`)
        expect(
          text.toLowerCase().includes(REAL),
          `${path} as ${auth === undefined ? "anonymous" : "olga"} shows ${REAL}`
        ).toBe(false)
      }
    }
    // Every route answered both viewers, but those that need a signed-in caller.
    expect(refused).toEqual(
      [
        "/users/Hidey/followers",
        "/users/Hidey/following",
        "/users/olga/followers",
        "/users/olga/following",
        "/repos/olga/pub/collaborators",
        "/repos/olga/pub/collaborators/Hidey/permission",
        `/teams/${team.id}/members`
      ].map((path) => `anonymous ${path} 401`)
    )
    // The account and admins see the address.
    for (const auth of [basic("Hidey"), basic("root")]) {
      expect((await json(await request(hearth, "GET", "/users/Hidey", auth))).email).toBe(REAL)
      const [given, several] = await json(await request(hearth, "GET", "/repos/Hidey/auto/commits?limit=2", auth))
      expect(given.author).toBeNull()
      expect(several.author).toMatchObject({ login: "Hidey", email: REAL })
      expect((await json(await request(hearth, "GET", "/repos/olga/pub/stargazers", auth)))[0].email).toBe(REAL)
    }
  })
})

// ---------------------------------------------------------------------------------------------
// Item 3: every `/users/{name}/…` route, for a private and a limited account, by caller.

const UNKNOWN = "nobody-here"
type Caller = "anonymous" | "other" | "restricted" | "publicOnly" | "self" | "admin"
const callers: ReadonlyArray<Caller> = ["anonymous", "other", "restricted", "publicOnly", "self", "admin"]

/** The routes, with `{u}` for the account; `web` ones are outside /api/v1. */
const routes: ReadonlyArray<{ readonly path: string; readonly web?: true; readonly ok?: number }> = [
  { path: "/users/{u}" },
  { path: "/users/{u}/keys" },
  { path: "/users/{u}/gpg_keys" },
  { path: "/users/{u}/starred" },
  { path: "/users/{u}/subscriptions" },
  { path: "/users/{u}/followers" },
  { path: "/users/{u}/following" },
  // The account follows olga; root follows the account.
  { path: "/users/{u}/following/olga", ok: 204 },
  { path: "/users/root/following/{u}", ok: 204 },
  { path: "/users/{u}/repos" },
  { path: "/users/{u}/orgs" },
  { path: "/users/{u}/tokens" },
  { path: "/{u}.gpg", web: true }
]

const call = (path: string, web: boolean | undefined, caller: Caller, target: string) => {
  const auth =
    caller === "anonymous"
      ? undefined
      : `token ${tokens[{ other: "olga", restricted: "rita", publicOnly: "publicOnly", self: target, admin: "root" }[caller]]}`
  return fetch(
    web === true ? `${hearth.base}${path}` : hearth.api(path),
    auth === undefined ? {} : { headers: { authorization: auth } }
  )
}

/** What each caller gets for an account of this visibility: "hidden" = exactly what an unknown name gets. */
const expected = (
  visibility: "private" | "limited",
  caller: Caller,
  route: (typeof routes)[number]
): number | "hidden" => {
  const seen = route.ok ?? 200
  switch (caller) {
    case "self":
    case "admin":
      return seen
    case "anonymous":
    case "restricted":
      return "hidden"
    case "other":
      if (visibility === "private") return "hidden"
      // A limited account is visible to signed-in users; the tokens of another account are not theirs.
      return route.path === "/users/{u}/tokens" ? 403 : seen
    case "publicOnly":
      if (visibility === "private") return "hidden"
      // Forgejo: a public-only token reaching a non-public user it may see is 403 (the web export: 404).
      return route.web === true ? "hidden" : 403
  }
}

describe("private and limited accounts on every /users/{name}/… route (item 3)", () => {
  beforeAll(async () => {
    for (const name of ["ghosty", "limmy"]) {
      await ok(await request(hearth, "PUT", "/user/following/olga", basic(name)), 204)
      await ok(await request(hearth, "PUT", `/user/following/${name}`, basic("root")), 204)
    }
  })

  for (const visibility of ["private", "limited"] as const) {
    const target = visibility === "private" ? "ghosty" : "limmy"
    it(`answers a ${visibility} account by caller, hidden ones exactly as an unknown name`, async () => {
      const failures: Array<string> = []
      for (const route of routes) {
        for (const caller of callers) {
          const want = expected(visibility, caller, route)
          const res = await call(route.path.replace("{u}", target), route.web, caller, target)
          const body = await res.text()
          const label = `${route.path.replace("{u}", target)} as ${caller}`
          if (want === "hidden") {
            const unknown = await call(route.path.replace("{u}", UNKNOWN), route.web, caller, target)
            const unknownBody = await unknown.text()
            if (res.status !== unknown.status || body.replaceAll(target, UNKNOWN) !== unknownBody) {
              failures.push(`${label}: ${res.status} ${body} — an unknown name: ${unknown.status} ${unknownBody}`)
            }
            // Signed-in callers get the empty 404 (anonymous ones are asked to sign in where the route needs it).
            if (caller !== "anonymous" && (res.status !== 404 || body !== ""))
              failures.push(`${label}: ${res.status} ${body}, not an empty 404`)
          } else if (res.status !== want) {
            failures.push(`${label}: ${res.status} ${body}, expected ${want}`)
          }
        }
      }
      expect(failures).toEqual([])
    })
  }

  it("answers GET /user/keys/{id} only for the caller's own keys: others, admins included, get the empty 404", async () => {
    const file = join(work, "olga-key")
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "olga@test", "-f", file])
    const created = await json(
      await ok(
        await request(hearth, "POST", "/user/keys", basic("olga"), {
          title: "laptop",
          key: readFileSync(`${file}.pub`, "utf8")
        }),
        201
      )
    )
    expect((await request(hearth, "GET", `/user/keys/${created.id}`, basic("olga"))).status).toBe(200)
    for (const who of ["root", "Hidey", "ghosty", "rita"]) {
      const res = await request(hearth, "GET", `/user/keys/${created.id}`, basic(who))
      expect([res.status, await res.text()]).toEqual([404, ""])
    }
    const missing = await request(hearth, "GET", "/user/keys/999999", basic("Hidey"))
    expect([missing.status, await missing.text()]).toEqual([404, ""])
  })

  it("refuses a fork into an organization the caller cannot see with the 422 of one that does not exist", async () => {
    await ok(await request(hearth, "POST", "/user/repos", basic("root"), { name: "src", auto_init: true }), 201)
    // A restricted user reaches only what it is given.
    await ok(
      await request(hearth, "PUT", "/repos/root/src/collaborators/rita", basic("root"), { permission: "read" }),
      204
    )
    await ok(await request(hearth, "POST", "/orgs", basic("ghosty"), { username: "hush", visibility: "private" }), 201)
    await ok(await request(hearth, "POST", "/orgs", basic("limmy"), { username: "quiet", visibility: "limited" }), 201)
    const fork = async (auth: string, organization: string) => {
      const res = await request(hearth, "POST", "/repos/root/src/forks", auth, { organization })
      return { status: res.status, message: (await json(res)).message as string }
    }
    const unknown = async (auth: string) => {
      const answer = await fork(auth, "no-such-org")
      return { ...answer, message: answer.message.replace("no-such-org", "{org}") }
    }
    const asIfUnknown = async (auth: string, org: string) => {
      const answer = await fork(auth, org)
      expect({ ...answer, message: answer.message.replace(org, "{org}") }).toEqual(await unknown(auth))
      expect(answer.status).toBe(422)
    }
    await asIfUnknown(basic("olga"), "hush")
    await asIfUnknown(basic("rita"), "hush")
    await asIfUnknown(basic("rita"), "quiet")
    // An organization the caller may see but not create in stays a 403.
    expect(await fork(basic("olga"), "quiet")).toMatchObject({ status: 403 })
    const forks = await json(await request(hearth, "GET", "/repos/root/src/forks", basic("root")))
    expect(forks).toEqual([])
  })
})
