// GET /users/search (Forgejo's user `Search`): keyword, uid (with the Ghost and Actions system users), sort,
// paging with X-Total-Count and Link, visibility per caller, e-mails converted for the caller.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { UserRow } from "../src/users/Repo.ts"
import { UsersRepo } from "../src/users/Repo.ts"
import { UsersService } from "../src/users/Service.ts"
import { createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const tokens: Record<string, string> = {}
let pubby: UserRow

const update = (name: string, changes: Parameters<UsersService["Service"]["update"]>[1]) =>
  hearth.run(
    Effect.gen(function* () {
      const users = yield* UsersService
      return yield* users.update(yield* users.get(name), changes)
    })
  )

beforeAll(async () => {
  // A small default page makes "no limit means DEFAULT_PAGING_NUM" observable.
  hearth = await startHearth({ api: { DEFAULT_PAGING_NUM: "3" } })
  await createUser(hearth, { username: "root", isAdmin: true })
  pubby = await createUser(hearth, { username: "Pubby", fullName: "Public Person", email: "pubby@example.com" })
  await createUser(hearth, { username: "limmy", visibility: "limited" })
  await createUser(hearth, { username: "privy", visibility: "private", email: "secret-privy@example.com" })
  await createUser(hearth, { username: "resty", restricted: true })
  await createUser(hearth, { username: "quiet", email: "quiet-mail@example.com" })
  await update("privy", { keep_email_private: true })
  await update("quiet", { keep_email_private: true })
  // Created out of name order, so that the creation order differs from the alphabetical one.
  for (const name of ["sorttest2", "sorttest10", "sorttest1", "sorttest3"]) await createUser(hearth, { username: name })
  await update("sorttest10", { location: "moved" })
  // An organization matching every keyword below: it must never be returned.
  await hearth.run(
    Effect.gen(function* () {
      const repo = yield* UsersRepo
      yield* repo.insert({ type: 1, name: "sorttest-org", email: "quiet-mail-org@example.com" })
    })
  )
  for (const name of ["root", "Pubby", "privy", "resty", "quiet"]) tokens[name] = await createToken(hearth, name)
  tokens.privyPublicOnly = await createToken(hearth, "privy", ["public-only", "read:user"])
  tokens.noUserScope = await createToken(hearth, "Pubby", ["read:repository"])
})
afterAll(() => hearth?.close())

const search = async (query: string, token?: string) => {
  const res = await fetch(
    hearth.api(`/users/search${query === "" ? "" : `?${query}`}`),
    token === undefined ? {} : { headers: { authorization: `token ${token}` } }
  )
  const body = await json(res)
  return { res, body, logins: res.status === 200 ? (body.data as Array<any>).map((u) => u.login) : [] }
}

describe("GET /users/search", () => {
  it("answers {ok, data} with X-Total-Count; anonymous callers see public users with placeholder e-mails", async () => {
    const { res, body, logins } = await search("limit=50")
    expect(res.status).toBe(200)
    expect(body.ok).toBe(true)
    expectSwagger(body.data, "User[]")
    expect(res.headers.get("x-total-count")).toBe(String(logins.length))
    expect(logins).toContain("Pubby")
    expect(logins).not.toContain("limmy")
    expect(logins).not.toContain("privy")
    expect(logins).not.toContain("sorttest-org")
    const user = body.data.find((u: any) => u.login === "Pubby")
    expect(user.email).toBe("pubby@noreply.localhost")
    expect(user.id).toBe(pubby.id)
    expect(user.username).toBe("Pubby")
    expect(user.login_name).toBe("")
    expect(user.is_admin).toBe(false)
  })

  it("shows a signed-in user public and limited users and itself, with real e-mails unless kept private", async () => {
    const { body, logins } = await search("limit=50", tokens.Pubby)
    expect(logins).toEqual(expect.arrayContaining(["Pubby", "limmy", "quiet", "root"]))
    expect(logins).not.toContain("privy")
    expect(body.data.find((u: any) => u.login === "root").email).toBe("root@example.com")
    expect(body.data.find((u: any) => u.login === "quiet").email).toBe("quiet@noreply.localhost")

    const self = await search("q=privy", tokens.privy)
    expect(self.logins).toEqual(["privy"])
    expect(self.body.data[0].email).toBe("secret-privy@example.com")
  })

  it("shows an admin every user, private ones and private e-mails included", async () => {
    const { body, logins } = await search("limit=50", tokens.root)
    expect(logins).toEqual(expect.arrayContaining(["privy", "limmy", "Pubby", "quiet", "resty"]))
    expect(logins).not.toContain("sorttest-org")
    expect(body.data.find((u: any) => u.login === "quiet").email).toBe("quiet-mail@example.com")
    expect(body.data.find((u: any) => u.login === "privy").visibility).toBe("private")
  })

  it("limits a public-only token to public users, its own private account excluded", async () => {
    const { body, logins } = await search("limit=50", tokens.privyPublicOnly)
    expect(logins).toContain("Pubby")
    expect(logins).not.toContain("privy")
    expect(logins).not.toContain("limmy")
    expect(body.data.every((u: any) => u.visibility === "public")).toBe(true)
  })

  it("shows a restricted user only itself", async () => {
    expect((await search("limit=50", tokens.resty)).logins).toEqual(["resty"])
  })

  it("matches a lower-cased substring of the name or the full name", async () => {
    expect((await search("q=UBB")).logins).toEqual(["Pubby"])
    expect((await search("q=public%20pers")).logins).toEqual(["Pubby"])
    // LIKE wildcards in the keyword are literal characters.
    expect((await search("q=%25")).logins).toEqual([])
    expect((await search("q=sort_est")).logins).toEqual([])
  })

  it("matches e-mails only where the caller may see them", async () => {
    expect((await search("q=pubby@example")).logins).toEqual(["Pubby"])
    expect((await search("q=quiet-mail")).logins).toEqual([])
    expect((await search("q=quiet-mail", tokens.Pubby)).logins).toEqual([])
    expect((await search("q=quiet-mail", tokens.root)).logins).toEqual(["quiet"])
    expect((await search("q=quiet-mail", tokens.quiet)).logins).toEqual(["quiet"])
  })

  it("answers uid=-1 with the Ghost user and uid=-2 with the Actions user, total 1", async () => {
    const ghost = await search("uid=-1")
    expect(ghost.res.headers.get("x-total-count")).toBe("1")
    expect(ghost.body.data).toHaveLength(1)
    expect(ghost.body.data[0]).toMatchObject({ id: -1, login: "Ghost", html_url: "", email: "ghost@noreply.localhost" })

    expectSwagger(ghost.body.data, "User[]")
    const actions = await search("uid=-2", tokens.root)
    expect(actions.res.headers.get("x-total-count")).toBe("1")
    expect(actions.body.data).toHaveLength(1)
    expect(actions.body.data[0]).toMatchObject({
      id: -2,
      login: "forgejo-actions",
      full_name: "Forgejo Actions",
      email: "noreply@forgejo.org",
      html_url: `${hearth.base}/forgejo-actions`
    })
    // Its e-mail is private: other users get the placeholder.
    expect((await search("uid=-2", tokens.Pubby)).body.data[0].email).toBe("forgejo-actions@noreply.localhost")
  })

  it("filters by a positive uid, and ignores a uid that is not a number", async () => {
    expect((await search(`uid=${pubby.id}`)).logins).toEqual(["Pubby"])
    expect((await search(`uid=${pubby.id}&q=sorttest`)).logins).toEqual([])
    expect((await search("uid=abc&q=pubby")).logins).toEqual(["Pubby"])
  })

  it("sorts by each of Forgejo's orders, names compared as text", async () => {
    const order = async (sort: string) =>
      (await search(`q=sorttest&limit=10${sort === "" ? "" : `&sort=${sort}`}`)).logins
    expect(await order("")).toEqual(["sorttest1", "sorttest10", "sorttest2", "sorttest3"])
    expect(await order("alphabetically")).toEqual(["sorttest1", "sorttest10", "sorttest2", "sorttest3"])
    expect(await order("no-such-order")).toEqual(["sorttest1", "sorttest10", "sorttest2", "sorttest3"])
    expect(await order("reversealphabetically")).toEqual(["sorttest3", "sorttest2", "sorttest10", "sorttest1"])
    expect(await order("oldest")).toEqual(["sorttest2", "sorttest10", "sorttest1", "sorttest3"])
    expect(await order("newest")).toEqual(["sorttest3", "sorttest1", "sorttest10", "sorttest2"])
    expect(await order("recentupdate")).toEqual(["sorttest10", "sorttest3", "sorttest1", "sorttest2"])
    expect(await order("leastupdate")).toEqual(["sorttest2", "sorttest1", "sorttest3", "sorttest10"])
  })

  it("pages with limit (DEFAULT_PAGING_NUM when absent) and answers X-Total-Count and Link", async () => {
    const first = await search("q=sorttest&limit=1")
    expect(first.logins).toEqual(["sorttest1"])
    expect(first.res.headers.get("x-total-count")).toBe("4")
    const url = (page: number) => `<${hearth.base}/api/v1/users/search?limit=1&page=${page}&q=sorttest>`
    expect(first.res.headers.get("link")).toBe(`${url(2)}; rel="next",${url(4)}; rel="last"`)

    const second = await search("q=sorttest&limit=1&page=2")
    expect(second.logins).toEqual(["sorttest10"])
    expect(second.res.headers.get("link")).toBe(
      `${url(3)}; rel="next",${url(4)}; rel="last",${url(1)}; rel="first",${url(1)}; rel="prev"`
    )

    const byDefault = await search("q=sorttest")
    expect(byDefault.logins).toEqual(["sorttest1", "sorttest10", "sorttest2"])
    expect(byDefault.res.headers.get("x-total-count")).toBe("4")

    const none = await search("q=nobody-at-all")
    expect(none.body).toEqual({ ok: true, data: [] })
    expect(none.res.headers.get("x-total-count")).toBe("0")
    expect(none.res.headers.get("link")).toBeNull()
  })

  it("needs the read:user scope", async () => {
    const { res, body } = await search("q=pubby", tokens.noUserScope)
    expect(res.status).toBe(403)
    expect(body.message).toBe("token does not have at least one of required scope(s): [read:user]")
  })

  // Last: it breaks the users table for a moment.
  it("answers a database failure with 500 {ok: false, error}", async () => {
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`ALTER TABLE users RENAME TO users_away`
      })
    )
    try {
      const { res, body } = await search("q=pubby")
      expect(res.status).toBe(500)
      expect(body.ok).toBe(false)
      expect(typeof body.error).toBe("string")
      expect(body.error).not.toBe("")
      expect(Object.keys(body).sort()).toEqual(["error", "ok"])
    } finally {
      await hearth.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`ALTER TABLE users_away RENAME TO users`
        })
      )
    }
    expect((await search("q=pubby")).logins).toEqual(["Pubby"])
  })
})
