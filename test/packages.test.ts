// The package machinery and the management API /api/v1/packages/{owner} (CONTRACT-PACKAGES §1,
// §2.3, §5, §6): Forgejo's Package and PackageFile objects, list filters and paging, delete,
// link/unlink, visibility (private user, limited and private orgs, teams' packages unit,
// restricted users), scopes, public-only tokens, two-factor Basic; a deleted repository unlinks
// its packages; an owner with packages cannot be deleted (purge deletes them).
import { createHash, randomBytes } from "node:crypto"
import { SqlClient } from "effect/sql/SqlClient"
import { Secret, TOTP } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let aliceWrite: string
let aliceRead: string

const put = (owner: string, path: string, auth: string, body: string | Uint8Array = "content") =>
  fetch(`${hearth.base}/api/packages/${owner}/generic/${path}`, {
    method: "PUT",
    headers: { authorization: auth },
    body
  })
const must = async (res: Promise<Response>, status: number) => {
  const r = await res
  expect(r.status, await r.clone().text()).toBe(status)
  return r
}

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["alice", "bob", "member", "packager", "outsider"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "hidden", visibility: "private" })
  await createUser(hearth, { username: "limiteduser", visibility: "limited" })
  await createUser(hearth, { username: "restricted", restricted: true })
  aliceWrite = await createToken(hearth, "alice", ["write:package", "read:repository"])
  aliceRead = await createToken(hearth, "alice", ["read:package"])
  // Organizations: limited and private, each with a reading team (code only) and a packages team.
  for (const [org, visibility] of [
    ["limitedorg", "limited"],
    ["privateorg", "private"]
  ] as const) {
    await must(request(hearth, "POST", "/orgs", basic("root"), { username: org, visibility }), 201)
    const readers = await json(
      await must(
        request(hearth, "POST", `/orgs/${org}/teams`, basic("root"), {
          name: "readers",
          units_map: { "repo.code": "read" }
        }),
        201
      )
    )
    const packagers = await json(
      await must(
        request(hearth, "POST", `/orgs/${org}/teams`, basic("root"), {
          name: "packagers",
          units_map: { "repo.code": "read", "repo.packages": "write" }
        }),
        201
      )
    )
    await must(request(hearth, "PUT", `/teams/${readers.id}/members/member`, basic("root")), 204)
    await must(request(hearth, "PUT", `/teams/${packagers.id}/members/packager`, basic("root")), 204)
  }
  // Fixtures: alice's versions (two of one package, one empty file), an org's package.
  await must(put("alice", "MyTool/1.0/tool.bin", `token ${aliceWrite}`, "one"), 201)
  await must(put("alice", "mytool/2.0/tool.bin", `token ${aliceWrite}`, "two"), 201)
  await must(put("alice", "other/0.1/empty.txt", `token ${aliceWrite}`, ""), 201)
  await must(put("hidden", "secret/1/s.txt", basic("hidden")), 201)
  await must(put("limiteduser", "lim/1/s.txt", basic("limiteduser")), 201)
}, 60_000)
afterAll(() => hearth?.close())

describe("the Package and PackageFile objects", () => {
  it("lists one entry per version, newest first, with Forgejo's fields and paging headers", async () => {
    const res = await request(hearth, "GET", "/packages/alice?limit=2", `token ${aliceRead}`)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toContain('rel="next"')
    const list = await json(res)
    expect(list.map((p: any) => [p.name, p.version])).toEqual([
      ["other", "0.1"],
      ["MyTool", "2.0"]
    ])
    for (const p of list) expectSwagger(p, "Package")
    expect(list[1]).toMatchObject({
      type: "generic",
      name: "MyTool",
      repository: null,
      html_url: `${hearth.base}/alice/-/packages/generic/mytool/2.0`
    })
    expect(list[1].owner.login).toBe("alice")
    expect(list[1].creator.login).toBe("alice")
  })

  it("filters by type (unknown: empty, all: every type) and by a substring of the name", async () => {
    const names = async (query: string) =>
      (await json(await request(hearth, "GET", `/packages/alice?${query}`))).map((p: any) => `${p.name}@${p.version}`)
    expect(await names("type=generic&q=TOOL")).toEqual(["MyTool@2.0", "MyTool@1.0"])
    expect(await names("type=npm")).toEqual([])
    expect(await names("type=all&q=oth")).toEqual(["other@0.1"])
    // LIKE wildcards are plain characters here.
    expect(await names("q=%25")).toEqual([])
  })

  it("gets a version (404 for an unknown type or version) and its files with Forgejo's `Size`", async () => {
    const got = await json(await must(request(hearth, "GET", "/packages/alice/generic/mytool/1.0"), 200))
    expectSwagger(got, "Package")
    expect(got).toMatchObject({ name: "MyTool", version: "1.0" })
    await must(request(hearth, "GET", "/packages/alice/dummy/mytool/1.0"), 404)
    await must(request(hearth, "GET", "/packages/alice/generic/mytool/9.9"), 404)
    const files = await json(await must(request(hearth, "GET", "/packages/alice/generic/other/0.1/files"), 200))
    for (const f of files) expectSwagger(f, "PackageFile")
    expect(files).toEqual([
      {
        id: files[0].id,
        Size: 0,
        name: "empty.txt",
        md5: "d41d8cd98f00b204e9800998ecf8427e",
        sha1: "da39a3ee5e6b4b0d3255bfef95601890afd80709",
        sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        sha512:
          "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
      }
    ])
  })

  it("a file's digests are right when read at once after its upload, and when their computation after the upload has not run", async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 1)
    const hex = (algorithm: string) => createHash(algorithm).update(bytes).digest("hex")
    const expected = { md5: hex("md5"), sha1: hex("sha1"), sha256: hex("sha256"), sha512: hex("sha512") }
    await must(put("alice", "digested/1.0/big.bin", `token ${aliceWrite}`, bytes), 201)
    const files = async () =>
      json(await must(request(hearth, "GET", "/packages/alice/generic/digested/1.0/files", `token ${aliceRead}`), 200))
    expect(await files()).toMatchObject([{ name: "big.bin", Size: bytes.length, ...expected }])
    // As the row is between the upload's answer and the computation (or after a crash in between).
    await hearth.run(
      SqlClient.use(
        (sql) => sql`UPDATE blobs SET md5 = NULL, sha1 = NULL, sha512 = NULL WHERE sha256 = ${expected.sha256}`
      )
    )
    expect(await files()).toMatchObject([{ name: "big.bin", ...expected }])
  })

  it("deletes a version: 401 anonymous, 403 read token or reader, 204 with write", async () => {
    await must(put("alice", "gone/1/x", `token ${aliceWrite}`), 201)
    await must(request(hearth, "DELETE", "/packages/alice/generic/gone/1"), 401)
    await must(request(hearth, "DELETE", "/packages/alice/generic/gone/1", `token ${aliceRead}`), 403)
    await must(request(hearth, "DELETE", "/packages/alice/generic/gone/1", basic("bob")), 403)
    await must(request(hearth, "DELETE", "/packages/alice/generic/gone/1", `token ${aliceWrite}`), 204)
    await must(request(hearth, "DELETE", "/packages/alice/generic/gone/1", `token ${aliceWrite}`), 404)
    await must(request(hearth, "GET", "/packages/alice/generic/gone/1"), 404)
  })
})

describe("visibility", () => {
  it("a private user's packages are 404 to everyone else, anonymous included", async () => {
    await must(request(hearth, "GET", "/packages/hidden"), 404)
    await must(request(hearth, "GET", "/packages/hidden", basic("bob")), 404)
    await must(request(hearth, "GET", "/packages/hidden/generic/secret/1", basic("bob")), 404)
    expect(await json(await must(request(hearth, "GET", "/packages/hidden", basic("hidden")), 200))).toHaveLength(1)
    await must(request(hearth, "GET", "/packages/hidden", basic("root")), 200)
  })

  it("a limited owner's packages: signed-in users (not restricted ones) read them, anonymous does not", async () => {
    await must(request(hearth, "GET", "/packages/limiteduser"), 404)
    await must(request(hearth, "GET", "/packages/limiteduser", basic("bob")), 200)
    await must(
      fetch(`${hearth.base}/api/packages/limiteduser/generic/lim/1/s.txt`, {
        headers: { authorization: basic("bob") }
      }),
      200
    )
    await must(fetch(`${hearth.base}/api/packages/limiteduser/generic/lim/1/s.txt`), 401)
    await must(request(hearth, "GET", "/packages/limitedorg", basic("restricted")), 404)
  })

  it("organizations: teams with the packages unit write, other members read, outsiders see a private one not at all", async () => {
    for (const org of ["limitedorg", "privateorg"]) {
      await must(put(org, "orgtool/1/a", basic("packager")), 201)
      await must(put(org, "orgtool/1/b", basic("member")), 403)
      await must(put(org, "orgtool/1/c", basic("outsider")), org === "privateorg" ? 404 : 403)
      await must(request(hearth, "GET", `/packages/${org}`, basic("member")), 200)
      await must(request(hearth, "DELETE", `/packages/${org}/generic/orgtool/1`, basic("member")), 403)
    }
    await must(request(hearth, "GET", "/packages/limitedorg", basic("outsider")), 200)
    await must(request(hearth, "GET", "/packages/privateorg", basic("outsider")), 404)
    await must(request(hearth, "GET", "/packages/privateorg"), 404)
    const registry = `${hearth.base}/api/packages/privateorg/generic/orgtool/1/a`
    await must(fetch(registry, { headers: { authorization: basic("outsider") } }), 404)
    await must(fetch(registry), 401)
    await must(fetch(registry, { headers: { authorization: basic("member") } }), 200)
  })
})

describe("credentials", () => {
  it("tokens need the package scope (403 on the API); a public-only token does not reach a private owner", async () => {
    const repoOnly = await createToken(hearth, "alice", ["read:repository"])
    await must(request(hearth, "GET", "/packages/alice", `token ${repoOnly}`), 403)
    const hiddenPublicOnly = await createToken(hearth, "hidden", ["read:package", "public-only"])
    await must(request(hearth, "GET", "/packages/hidden", `token ${hiddenPublicOnly}`), 403)
    const alicePublicOnly = await createToken(hearth, "alice", ["read:package", "public-only"])
    await must(request(hearth, "GET", "/packages/alice", `token ${alicePublicOnly}`), 200)
  })

  it("Basic with a password needs the passcode once two-factor is on", async () => {
    await createUser(hearth, { username: "twofactor" })
    const enrolled = await json(await must(request(hearth, "POST", "/user/twofa", basic("twofactor")), 201))
    const totp = new TOTP({ secret: Secret.fromBase32(enrolled.secret) })
    // A code of the previous step, made away from a step's edge (as test/twofa.test.ts does).
    const left = 30_000 - (Date.now() % 30_000)
    if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
    const previous = totp.generate({ timestamp: Date.now() - 30_000 })
    await must(request(hearth, "POST", "/user/twofa/verify", basic("twofactor"), { passcode: previous }), 204)
    const registry = (headers: Record<string, string>) =>
      fetch(`${hearth.base}/api/packages/twofactor/generic/t/1/f`, { method: "PUT", headers, body: "x" })
    await must(registry({ authorization: basic("twofactor") }), 401)
    await must(registry({ authorization: basic("twofactor"), "x-forgejo-otp": totp.generate() }), 201)
  })
})

describe("linking to a repository", () => {
  it("links to a repository of the owner (201), shows it, refuses a second link (400), unlinks (204)", async () => {
    await must(request(hearth, "POST", "/user/repos", basic("alice"), { name: "code", private: true }), 201)
    await must(request(hearth, "POST", "/user/repos", basic("bob"), { name: "bobs" }), 201)
    const link = "/packages/alice/generic/mytool/-/link/code"
    await must(request(hearth, "POST", link), 401)
    await must(request(hearth, "POST", link, `token ${aliceRead}`), 403)
    await must(request(hearth, "POST", "/packages/alice/generic/mytool/-/link/bobs", `token ${aliceWrite}`), 404)
    await must(request(hearth, "POST", "/packages/alice/generic/nothing/-/link/code", `token ${aliceWrite}`), 404)
    await must(request(hearth, "POST", link, `token ${aliceWrite}`), 201)
    await must(request(hearth, "POST", link, `token ${aliceWrite}`), 400)
    const mine = await json(await request(hearth, "GET", "/packages/alice/generic/mytool/1.0", `token ${aliceWrite}`))
    expect(mine.repository.full_name).toBe("alice/code")
    // bob sees the package, not the private repository it is linked to.
    const his = await json(await request(hearth, "GET", "/packages/alice/generic/mytool/1.0", basic("bob")))
    expect(his.repository).toBeNull()
    await must(request(hearth, "POST", "/packages/alice/generic/mytool/-/unlink", basic("bob")), 403)
    await must(request(hearth, "POST", "/packages/alice/generic/mytool/-/unlink", `token ${aliceWrite}`), 204)
    await must(request(hearth, "POST", "/packages/alice/generic/mytool/-/unlink", `token ${aliceWrite}`), 400)
    const after = await json(await request(hearth, "GET", "/packages/alice/generic/mytool/1.0", `token ${aliceWrite}`))
    expect(after.repository).toBeNull()
  })

  it("deleting the repository unlinks its packages", async () => {
    await must(request(hearth, "POST", "/user/repos", basic("alice"), { name: "doomed" }), 201)
    await must(request(hearth, "POST", "/packages/alice/generic/other/-/link/doomed", basic("alice")), 201)
    const linked = await json(await request(hearth, "GET", "/packages/alice/generic/other/0.1", basic("alice")))
    expect(linked.repository.full_name).toBe("alice/doomed")
    await must(request(hearth, "DELETE", "/repos/alice/doomed", basic("alice")), 204)
    const after = await json(
      await must(request(hearth, "GET", "/packages/alice/generic/other/0.1", basic("alice")), 200)
    )
    expect(after.repository).toBeNull()
  })
})

describe("deleting owners", () => {
  it("a user who owns packages cannot be deleted (422); purge deletes them", async () => {
    await createUser(hearth, { username: "leaver" })
    await must(put("leaver", "p/1/f", basic("leaver")), 201)
    const refused = await must(request(hearth, "DELETE", "/admin/users/leaver", basic("root")), 422)
    expect((await json(refused)).message).toContain("still has ownership of packages")
    await must(request(hearth, "DELETE", "/admin/users/leaver?purge=true", basic("root")), 204)
    await must(request(hearth, "GET", "/packages/leaver", basic("root")), 404)
  })

  it("an organization that owns packages cannot be deleted (422)", async () => {
    const refused = await must(request(hearth, "DELETE", "/orgs/limitedorg", basic("root")), 422)
    expect((await json(refused)).message).toContain("still has ownership of packages")
    await must(request(hearth, "DELETE", "/packages/limitedorg/generic/orgtool/1", basic("root")), 204)
    await must(request(hearth, "DELETE", "/orgs/limitedorg", basic("root")), 204)
  })
})
