// E-mail addresses (issue 5 item 1): the primary address listed as primary and verified, added
// ones unverified until activated with the token Hearth logs (no mail server), addresses unique
// on the whole instance, invalid input refused with nothing changed, the primary never deleted.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  // Info: the activation tokens are written to the log.
  hearth = await startHearth({ log: { LEVEL: "Info" } })
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })
})
afterAll(() => hearth?.close())
afterEach(() => {
  vi.restoreAllMocks()
})

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)
const list = async (user: string) => {
  const res = await call("GET", "/user/emails", basic(user))
  expect(res.status).toBe(200)
  const body = await json(res)
  expectSwagger(body, "Email[]")
  return body as Array<{ email: string; verified: boolean; primary: boolean; user_id: number; username: string }>
}
const stored = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT lower_email FROM email_addresses ORDER BY lower_email`
      return rows.map((r) => r.lower_email as string)
    })
  )

/** Runs `add` while capturing the log; answers the response and the tokens logged for each address. */
const addCapturingTokens = async (user: string, emails: ReadonlyArray<string>) => {
  const lines: Array<string> = []
  const capture = (...args: Array<unknown>) => {
    lines.push(args.map(String).join(" "))
  }
  vi.spyOn(console, "log").mockImplementation(capture)
  vi.spyOn(console, "error").mockImplementation(capture)
  const res = await call("POST", "/user/emails", basic(user), { emails })
  vi.restoreAllMocks()
  const tokens = new Map<string, string>()
  for (const line of lines) {
    const match = /E-mail address (\S+) was added .*"token": "([0-9a-f]{40})"/.exec(line)
    if (match !== null) tokens.set(match[1]!, match[2]!)
  }
  return { res, tokens, lines }
}

describe("listing", () => {
  it("lists the primary address as primary and verified", async () => {
    const emails = await list("alice")
    expect(emails).toEqual([
      { email: "alice@example.com", verified: true, primary: true, user_id: expect.any(Number), username: "alice" }
    ])
    expect((await call("GET", "/user/emails")).status).toBe(401)
  })
})

describe("adding and activating", () => {
  it("adds unverified addresses (201), logs one activation token each, and activates with it", async () => {
    const { res, tokens } = await addCapturingTokens("alice", ["alice.work@example.org", "Alice.Home@Example.net"])
    expect(res.status, await res.clone().text()).toBe(201)
    const added = await json(res)
    expectSwagger(added, "Email[]")
    expect(added.map((e: any) => [e.email, e.verified, e.primary, e.username])).toEqual([
      ["alice.work@example.org", false, false, "alice"],
      ["Alice.Home@Example.net", false, false, "alice"]
    ])
    expect([...tokens.keys()].sort()).toEqual(["Alice.Home@Example.net", "alice.work@example.org"])
    expect((await list("alice")).map((e) => [e.email, e.verified, e.primary])).toEqual([
      ["alice@example.com", true, true],
      ["alice.work@example.org", false, false],
      ["Alice.Home@Example.net", false, false]
    ])

    // The token is only good for its owner: bob cannot use it, and it is not spent by trying.
    const token = tokens.get("alice.work@example.org")!
    const stolen = await call("POST", "/user/emails/activate", basic("bob"), { token })
    expect(stolen.status).toBe(422)
    expect((await json(stolen)).message).toContain("activation token is invalid")

    const activated = await call("POST", "/user/emails/activate", basic("alice"), { token })
    expect(activated.status).toBe(200)
    const email = await json(activated)
    expectSwagger(email, "Email")
    expect(email).toMatchObject({ email: "alice.work@example.org", verified: true, primary: false })
    expect((await list("alice")).find((e) => e.email === "alice.work@example.org")?.verified).toBe(true)
    // Spent.
    expect((await call("POST", "/user/emails/activate", basic("alice"), { token })).status).toBe(422)
    expect((await call("POST", "/user/emails/activate", basic("alice"), { token: "nope" })).status).toBe(422)
    expect((await call("POST", "/user/emails/activate", basic("alice"), {})).status).toBe(422)
  })

  it("refuses an expired token", async () => {
    const { res, tokens } = await addCapturingTokens("carol", ["carol.late@example.org"])
    expect(res.status).toBe(201)
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE email_addresses SET activation_expires = now() - interval '1 minute'
        WHERE lower_email = 'carol.late@example.org'`
      })
    )
    const late = await call("POST", "/user/emails/activate", basic("carol"), {
      token: tokens.get("carol.late@example.org")
    })
    expect(late.status).toBe(422)
    expect((await list("carol")).find((e) => e.email === "carol.late@example.org")?.verified).toBe(false)
  })

  it("releases an address that was never activated once its token has expired, so it cannot be squatted", async () => {
    const { res } = await addCapturingTokens("bob", ["squatted@example.org"])
    expect(res.status).toBe(201)
    // While its token is valid, the address is taken.
    expect((await call("POST", "/user/emails", basic("dave"), { emails: ["squatted@example.org"] })).status).toBe(422)
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE email_addresses SET activation_expires = now() - interval '1 minute'
        WHERE lower_email = 'squatted@example.org'`
      })
    )
    const claimed = await call("POST", "/user/emails", basic("dave"), { emails: ["squatted@example.org"] })
    expect(claimed.status).toBe(201)
    expect((await list("bob")).map((e) => e.email)).not.toContain("squatted@example.org")
    expect((await list("dave")).map((e) => e.email)).toContain("squatted@example.org")
    expect((await call("DELETE", "/user/emails", basic("dave"), { emails: ["squatted@example.org"] })).status).toBe(204)
  })

  it("activates at once the addresses a site administrator adds, and logs no token", async () => {
    const { res, tokens } = await addCapturingTokens("root", ["root.second@example.org"])
    expect(res.status).toBe(201)
    expect((await json(res))[0]).toMatchObject({ email: "root.second@example.org", verified: true })
    expect(tokens.size).toBe(0)
  })

  it("refuses addresses in use anywhere on the instance (422), case-insensitively, adding none of the list", async () => {
    const before = await stored()
    for (const taken of ["BOB@example.com", "alice@example.com", "ALICE.WORK@example.org", "alice.home@example.net"]) {
      const res = await call("POST", "/user/emails", basic("bob"), { emails: ["bob.fresh@example.org", taken] })
      expect(res.status, taken).toBe(422)
      expect((await json(res)).message).toMatch(/^Email address has been used: /)
    }
    expect(await stored()).toEqual(before)
    expect((await list("bob")).length).toBe(1)
  })

  it("refuses invalid addresses and empty lists (422) and changes nothing", async () => {
    const before = await stored()
    for (const bad of ["not-an-address", "a@b", "x y@example.org", "", "@example.org"]) {
      const res = await call("POST", "/user/emails", basic("bob"), { emails: ["bob.ok@example.org", bad] })
      expect(res.status, bad).toBe(422)
      expect((await json(res)).message).toContain("invalid format")
    }
    const empty = await call("POST", "/user/emails", basic("bob"), { emails: [] })
    expect(empty.status).toBe(422)
    expect((await json(empty)).message).toBe("Email list empty")
    expect((await call("POST", "/user/emails", basic("bob"), { emails: "x@example.org" })).status).toBe(422)
    expect(await stored()).toEqual(before)
  })

  it("lets exactly one of two accounts racing for one address have it", async () => {
    const results = await Promise.all([
      call("POST", "/user/emails", basic("bob"), { emails: ["contested@example.org"] }),
      call("POST", "/user/emails", basic("carol"), { emails: ["contested@example.org"] })
    ])
    expect(results.map((r) => r.status).sort()).toEqual([201, 422])
    expect((await stored()).filter((e) => e === "contested@example.org")).toHaveLength(1)
  })

  it("needs write:user to add, read:user to list", async () => {
    const reader = await createToken(hearth, "dave", ["read:user"])
    expect((await call("GET", "/user/emails", `token ${reader}`)).status).toBe(200)
    const refused = await call("POST", "/user/emails", `token ${reader}`, { emails: ["dave.x@example.org"] })
    expect(refused.status).toBe(403)
    expect((await call("DELETE", "/user/emails", `token ${reader}`, { emails: ["dave.x@example.org"] })).status).toBe(
      403
    )
    expect((await call("POST", "/user/emails", undefined, { emails: ["dave.x@example.org"] })).status).toBe(401)
  })
})

describe("deleting", () => {
  it("deletes added addresses (204), which others may then use", async () => {
    const { res } = await addCapturingTokens("dave", ["dave.old@example.org", "dave.keep@example.org"])
    expect(res.status).toBe(201)
    const deleted = await call("DELETE", "/user/emails", basic("dave"), { emails: ["DAVE.OLD@example.org"] })
    expect(deleted.status).toBe(204)
    expect(await deleted.text()).toBe("")
    expect((await list("dave")).map((e) => e.email)).not.toContain("dave.old@example.org")
    expect((await call("POST", "/user/emails", basic("carol"), { emails: ["dave.old@example.org"] })).status).toBe(201)
    // An empty list deletes nothing.
    expect((await call("DELETE", "/user/emails", basic("dave"), { emails: [] })).status).toBe(204)
  })

  it("keeps an added address out of other accounts' primary addresses (admin create and edit)", async () => {
    const { res } = await addCapturingTokens("bob", ["bob.second@example.org"])
    expect(res.status).toBe(201)
    const created = await call("POST", "/admin/users", basic("root"), {
      username: "erin",
      email: "BOB.second@example.org",
      password: "password123"
    })
    expect(created.status).toBe(422)
    expect((await json(created)).message).toContain("e-mail already in use")
    const edited = await call("PATCH", "/admin/users/carol", basic("root"), {
      email: "bob.second@example.org",
      login_name: "carol",
      source_id: 0
    })
    expect(edited.status).toBe(400) // the admin edit route answers a taken address with 400, as Forgejo
    expect((await json(edited)).message).toContain("e-mail already in use")
  })

  it("refuses to delete the primary address (422) or another account's address (404), deleting none of the list", async () => {
    const before = await stored()
    const primary = await call("DELETE", "/user/emails", basic("dave"), {
      emails: ["dave.keep@example.org", "Dave@example.com"]
    })
    expect(primary.status).toBe(422)
    expect((await json(primary)).message).toContain("Primary e-mail address cannot be deleted")
    const foreign = await call("DELETE", "/user/emails", basic("dave"), {
      emails: ["dave.keep@example.org", "alice.work@example.org"]
    })
    expect(foreign.status).toBe(404)
    expect(await foreign.text()).toBe("")
    expect(await stored()).toEqual(before)
    expect((await list("dave")).map((e) => e.email)).toEqual(["dave@example.com", "dave.keep@example.org"])
  })
})
