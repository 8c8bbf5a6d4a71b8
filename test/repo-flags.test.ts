// Repository flags (Forgejo's /repos/{o}/{r}/flags): site administrators list, add, check, replace
// and remove them; others who may see the repository get 403, others 404; bad names are a 422 that
// changes nothing; flags go with their repository.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "chief", isAdmin: true })
  await createUser(hearth, { username: "owner" })
  await createUser(hearth, { username: "stranger" })
  await apiAs(hearth, "POST", "/user/repos", "owner", { name: "marked", private: true })
  await apiAs(hearth, "POST", "/user/repos", "owner", { name: "open" })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

const flagsOf = async (repo: string) => apiAs(hearth, "GET", `/repos/owner/${repo}/flags`, "chief")

describe("repository flags", () => {
  it("a site admin adds, checks, lists, replaces and removes them", async () => {
    expect(await flagsOf("marked")).toEqual([])
    expect((await request(hearth, "PUT", "/repos/owner/marked/flags/spam-check", basic("chief"))).status).toBe(204)
    expect((await request(hearth, "PUT", "/repos/owner/marked/flags/spam-check", basic("chief"))).status).toBe(204)
    expect((await request(hearth, "PUT", "/repos/owner/marked/flags/featured", basic("chief"))).status).toBe(204)
    expect(await flagsOf("marked")).toEqual(["featured", "spam-check"])
    expect((await request(hearth, "GET", "/repos/owner/marked/flags/featured", basic("chief"))).status).toBe(204)
    const absent = await request(hearth, "GET", "/repos/owner/marked/flags/nothing", basic("chief"))
    expect(absent.status).toBe(404)
    const replaced = await request(hearth, "PUT", "/repos/owner/marked/flags", basic("chief"), {
      flags: ["b", "a", "b"]
    })
    expect(replaced.status).toBe(204)
    expect(await flagsOf("marked")).toEqual(["a", "b"])
    expect((await request(hearth, "DELETE", "/repos/owner/marked/flags/a", basic("chief"))).status).toBe(204)
    expect(await flagsOf("marked")).toEqual(["b"])
    expect((await request(hearth, "DELETE", "/repos/owner/marked/flags", basic("chief"))).status).toBe(204)
    expect(await flagsOf("marked")).toEqual([])
    // Flags of one repository are not another's.
    await request(hearth, "PUT", "/repos/owner/open/flags/x", basic("chief"))
    expect(await flagsOf("marked")).toEqual([])
    expect(await flagsOf("open")).toEqual(["x"])
  })

  it("refuses names that are no names, changing nothing", async () => {
    await request(hearth, "PUT", "/repos/owner/marked/flags", basic("chief"), { flags: ["kept"] })
    for (const flags of [["ok", ""], ["ok", "x".repeat(101)], ["line\nbreak"]]) {
      const res = await request(hearth, "PUT", "/repos/owner/marked/flags", basic("chief"), { flags })
      expect(res.status, JSON.stringify(flags)).toBe(422)
      expect((await json(res)).message).toMatch(/a flag is 1 to 100 characters/)
    }
    expect((await request(hearth, "PUT", "/repos/owner/marked/flags/a%0Ab", basic("chief"))).status).toBe(422)
    expect(await flagsOf("marked")).toEqual(["kept"])
  })

  it("only site admins: 403 for those who may see the repository, 404 for the others", async () => {
    const paths = [
      ["GET", "/repos/owner/marked/flags"],
      ["PUT", "/repos/owner/marked/flags/z"],
      ["DELETE", "/repos/owner/marked/flags"]
    ] as const
    for (const [method, path] of paths) {
      const owner = await request(hearth, method, path, basic("owner"))
      expect(owner.status, `${method} ${path}`).toBe(403)
      expect((await json(owner)).message).toBe("user should be the site admin")
      expect((await request(hearth, method, path, basic("stranger"))).status, `${method} ${path}`).toBe(404)
      expect((await request(hearth, method, path)).status, `${method} ${path}`).toBe(401)
    }
    expect(await flagsOf("marked")).toEqual(["kept"])
  })

  it("go with their repository", async () => {
    await apiAs(hearth, "POST", "/user/repos", "owner", { name: "brief" })
    await request(hearth, "PUT", "/repos/owner/brief/flags/gone", basic("chief"))
    await apiAs(hearth, "DELETE", "/repos/owner/brief", "owner")
    await apiAs(hearth, "POST", "/user/repos", "owner", { name: "brief" })
    expect(await flagsOf("brief")).toEqual([])
  })
})
