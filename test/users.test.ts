// GET /user and GET /users/{username} (Forgejo's `GetAuthenticatedUser`, `GetInfo`, services/convert `ToUser`): private fields only for the
// account itself and admins, placeholder e-mails, visibility answered 404, stored letter case.
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UsersRepo } from "../src/users/Repo.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const tokens: Record<string, string> = {}

const update = (name: string, changes: Parameters<UsersService["Service"]["update"]>[1]) =>
  hearth.run(
    Effect.gen(function* () {
      const users = yield* UsersService
      return yield* users.update(yield* users.get(name), changes)
    })
  )

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "boss", isAdmin: true })
  await createUser(hearth, { username: "MixedCase", fullName: "Mixed Case", email: "mixed@example.com" })
  await createUser(hearth, { username: "other" })
  await createUser(hearth, { username: "limited1", visibility: "limited" })
  await createUser(hearth, { username: "private1", visibility: "private" })
  await createUser(hearth, { username: "hider", email: "hider@example.com" })
  await createUser(hearth, { username: "caged", restricted: true })
  await update("hider", { keep_email_private: true })
  await update("MixedCase", { pronouns: "they/them", location: "Earth", keep_pronouns_private: true })
  await hearth.run(
    Effect.gen(function* () {
      const repo = yield* UsersRepo
      yield* repo.insert({ type: 1, name: "someorg", email: "org@example.com" })
    })
  )
  for (const name of ["boss", "MixedCase", "other", "private1", "caged"]) tokens[name] = await createToken(hearth, name)
  tokens.publicOnly = await createToken(hearth, "other", ["public-only", "read:user"])
})
afterAll(() => hearth?.close())

const get = (path: string, token?: string) =>
  fetch(hearth.api(path), token === undefined ? {} : { headers: { authorization: `token ${token}` } })

describe("GET /user", () => {
  it("answers the caller with every private field filled", async () => {
    const res = await get("/user", tokens.MixedCase)
    expect(res.status).toBe(200)
    const me = await json(res)
    expectSwagger(me, "User")
    expect(me).toMatchObject({
      login: "MixedCase",
      username: "MixedCase",
      login_name: "MixedCase",
      full_name: "Mixed Case",
      email: "mixed@example.com",
      is_admin: false,
      active: true,
      prohibit_login: false,
      restricted: false,
      visibility: "public",
      pronouns: "they/them",
      location: "Earth",
      html_url: `${hearth.base}/MixedCase`,
      avatar_url: `${hearth.base}/avatars/identicon/mixedcase`
    })
    expect(me.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    // The same with the password.
    const byPassword = await json(await fetch(hearth.api("/user"), { headers: { authorization: basic("MixedCase") } }))
    expect(byPassword).toEqual(me)
  })

  it("shows an admin its own admin flag", async () => {
    expect((await json(await get("/user", tokens.boss))).is_admin).toBe(true)
  })
})

describe("GET /users/{username}", () => {
  it("looks names up ignoring case and keeps the stored letter case", async () => {
    for (const name of ["MixedCase", "mixedcase", "MIXEDCASE"]) {
      const res = await get(`/users/${name}`)
      expect(res.status, name).toBe(200)
      expect((await json(res)).login).toBe("MixedCase")
    }
  })

  it("answers an unknown name with 404 and an empty body", async () => {
    const res = await get("/users/nobody-here")
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })

  it("gives anonymous callers the placeholder e-mail, no private fields and no pronouns kept private", async () => {
    const user = await json(await get("/users/MixedCase"))
    expectSwagger(user, "User")
    expect(user.email).toBe("mixedcase@noreply.localhost")
    expect(user).toMatchObject({
      login_name: "",
      source_id: 0,
      is_admin: false,
      active: false,
      language: "",
      last_login: "0001-01-01T00:00:00Z",
      pronouns: "",
      location: "Earth"
    })
  })

  it("gives other signed-in users the real e-mail but no private fields", async () => {
    const user = await json(await get("/users/MixedCase", tokens.other))
    expect(user.email).toBe("mixed@example.com")
    expect(user.pronouns).toBe("they/them")
    expect(user.login_name).toBe("")
    expect(user.active).toBe(false)
  })

  it("gives admins the private fields of anyone", async () => {
    const user = await json(await get("/users/MixedCase", tokens.boss))
    expect(user).toMatchObject({ login_name: "MixedCase", active: true, email: "mixed@example.com" })
    expect((await json(await get("/users/boss", tokens.other))).is_admin).toBe(false)
    expect((await json(await get("/users/boss", tokens.boss))).is_admin).toBe(true)
  })

  it("hides a kept-private e-mail from everyone but the account and admins", async () => {
    expect((await json(await get("/users/hider", tokens.other))).email).toBe("hider@noreply.localhost")
    expect((await json(await get("/users/hider", tokens.boss))).email).toBe("hider@example.com")
  })

  it("answers a limited user 404 to anonymous callers and restricted users, 200 to signed-in ones", async () => {
    expect((await get("/users/limited1")).status).toBe(404)
    expect((await get("/users/limited1", tokens.caged)).status).toBe(404)
    const res = await get("/users/limited1", tokens.other)
    expect(res.status).toBe(200)
    expect((await json(res)).visibility).toBe("limited")
  })

  it("answers a private user 404 except to itself and admins", async () => {
    expect((await get("/users/private1")).status).toBe(404)
    expect((await get("/users/private1", tokens.other)).status).toBe(404)
    expect((await get("/users/private1", tokens.private1)).status).toBe(200)
    const res = await get("/users/private1", tokens.boss)
    expect(res.status).toBe(200)
    expect((await json(res)).visibility).toBe("private")
  })

  it("refuses a public-only token a non-public user with 403", async () => {
    expect((await get("/users/MixedCase", tokens.publicOnly)).status).toBe(200)
    const res = await get("/users/limited1", tokens.publicOnly)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token scope is limited to public users")
  })

  it("answers an organization in the User shape: placeholder e-mail to anonymous, real to signed-in", async () => {
    expect((await json(await get("/users/someorg"))).email).toBe("someorg@noreply.localhost")
    const org = await json(await get("/users/someorg", tokens.other))
    expect(org.login).toBe("someorg")
    expect(org.email).toBe("org@example.com")
  })
})

describe("account look-ups are cached, never stale after a write", () => {
  it("shows a change and a deletion at once, however often the account was just read", async () => {
    await createUser(hearth, { username: "cachee", fullName: "Before" })
    for (let i = 0; i < 3; i++) expect((await json(await get("/users/cachee"))).full_name).toBe("Before")
    await update("cachee", { full_name: "After" })
    expect((await json(await get("/users/cachee"))).full_name).toBe("After")
    await update("cachee", { visibility: "private" })
    expect((await get("/users/cachee")).status).toBe(404)
    await update("cachee", { visibility: "public" })
    expect((await get("/users/cachee")).status).toBe(200)
    await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        yield* users.remove(yield* users.get("cachee"))
      })
    )
    expect((await get("/users/cachee")).status).toBe(404)
  })

  it("does not keep a row read inside a transaction that rolls back", async () => {
    await createUser(hearth, { username: "rollback", fullName: "Committed" })
    const outcome = await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const repo = yield* UsersRepo
        const user = yield* repo.findByName("rollback")
        return yield* Effect.gen(function* () {
          yield* repo.update(Option.getOrThrow(user).id, { full_name: "Uncommitted" })
          const inside = yield* repo.findByName("rollback") // read (and offered to the cache) inside
          expect(Option.getOrThrow(inside).fullName).toBe("Uncommitted")
          return yield* Effect.fail("roll back" as const)
        }).pipe(sql.withTransaction, Effect.flip)
      })
    )
    expect(outcome).toBe("roll back")
    expect((await json(await get("/users/rollback"))).full_name).toBe("Committed")
  })
})
