// Deploy keys (issue 5 item 3): managed by the repository's admins, read-only or read-write,
// swagger DeployKey; a key is either a user key or a deploy key, and once per repository.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { keygen as sshKeygen } from "./support/ssh.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const dir = mkdtempSync(join(tmpdir(), "hearth-deploy-"))
const keygen = () => sshKeygen(dir)

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol"]) await createUser(hearth, { username })
  for (const [name, priv] of [
    ["app", false],
    ["secret", true],
    ["other", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })).status).toBe(201)
  }
  // bob may write to alice/app but is not its admin.
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/bob", basic("alice"), { permission: "write" })).status
  ).toBe(204)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)
const deployRows = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [d] = yield* sql`SELECT count(*) AS n FROM deploy_keys`
      const [k] = yield* sql`SELECT count(*) AS n FROM public_keys`
      return { deploy: Number(d!.n), keys: Number(k!.n) }
    })
  )

describe("deploy keys", () => {
  it("adds a read-only key and a read-write key and answers DeployKey", async () => {
    const ro = keygen()
    const res = await call("POST", "/repos/alice/app/keys", basic("alice"), {
      title: "ci",
      key: ro.pub,
      read_only: true
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(body, "DeployKey")
    expect(body.read_only).toBe(true)
    expect(body.fingerprint).toBe(ro.fingerprint)
    expect(body.key).toBe(ro.pub)
    expect(body.title).toBe("ci")
    expect(body.url).toBe(`${hearth.settings.server.ROOT_URL}api/v1/repos/alice/app/keys/${body.id}`)
    expect(body.repository.full_name).toBe("alice/app")
    expect(typeof body.key_id).toBe("number")
    const rw = await json(
      await call("POST", "/repos/alice/app/keys", basic("alice"), { title: "deployer", key: keygen().pub })
    )
    expect(rw.read_only).toBe(false)

    const list = await call("GET", "/repos/alice/app/keys", basic("alice"))
    expect(list.headers.get("x-total-count")).toBe("2")
    const rows = await json(list)
    for (const row of rows) expectSwagger(row, "DeployKey")
    expect(rows.map((r: any) => r.title)).toEqual(["ci", "deployer"])
    const byFp = await json(
      await call("GET", `/repos/alice/app/keys?fingerprint=${encodeURIComponent(ro.fingerprint)}`, basic("alice"))
    )
    expect(byFp.map((r: any) => r.id)).toEqual([body.id])
    const byKeyId = await json(await call("GET", `/repos/alice/app/keys?key_id=${rw.key_id}`, basic("alice")))
    expect(byKeyId.map((r: any) => r.id)).toEqual([rw.id])
    const one = await json(await call("GET", `/repos/alice/app/keys/${body.id}`, basic("alice")))
    expectSwagger(one, "DeployKey")
    expect(one.id).toBe(body.id)
    // A deploy key is not a user's key.
    expect(await json(await call("GET", "/user/keys", basic("alice")))).toEqual([])
  })

  it("refuses duplicates and bad keys with 422, storing nothing", async () => {
    const k = keygen()
    expect((await call("POST", "/repos/alice/other/keys", basic("alice"), { title: "one", key: k.pub })).status).toBe(
      201
    )
    const before = await deployRows()
    const cases: Array<[string, unknown, string]> = [
      ["/repos/alice/other/keys", { title: "two", key: k.pub }, "This key has already been added to this repository"],
      ["/repos/alice/other/keys", { title: "one", key: keygen().pub }, "A key with the same name already exists"],
      ["/repos/alice/other/keys", { title: "bad", key: "ssh-ed25519 AAAA" }, "Invalid key content"],
      ["/repos/alice/other/keys", { title: "", key: keygen().pub }, "[Title]: Required"]
    ]
    for (const [path, body, message] of cases) {
      const res = await call("POST", path, basic("alice"), body)
      expect(res.status, message).toBe(422)
      expect((await json(res)).message, message).toContain(message)
    }
    expect(await deployRows()).toEqual(before)
    // A user key cannot become a deploy key, nor a deploy key a user key.
    const userKey = keygen()
    expect((await call("POST", "/user/keys", basic("bob"), { title: "mine", key: userKey.pub })).status).toBe(201)
    const asDeploy = await call("POST", "/repos/alice/other/keys", basic("alice"), {
      title: "stolen",
      key: userKey.pub
    })
    expect(asDeploy.status).toBe(422)
    expect((await json(asDeploy)).message).toBe("Key content has been used as non-deploy key")
    const asUser = await call("POST", "/user/keys", basic("bob"), { title: "taken", key: k.pub })
    expect(asUser.status).toBe(422)
  })

  it("shares one key between repositories and keeps it until the last one removes it", async () => {
    const k = keygen()
    const a = await json(await call("POST", "/repos/alice/other/keys", basic("alice"), { title: "shared", key: k.pub }))
    const b = await json(
      await call("POST", "/repos/alice/secret/keys", basic("alice"), { title: "shared", key: k.pub, read_only: true })
    )
    expect(b.key_id).toBe(a.key_id)
    expect(b.read_only).toBe(true)
    const before = await deployRows()
    expect((await call("DELETE", `/repos/alice/other/keys/${a.id}`, basic("alice"))).status).toBe(204)
    expect(await deployRows()).toEqual({ deploy: before.deploy - 1, keys: before.keys })
    expect((await call("GET", `/repos/alice/other/keys/${a.id}`, basic("alice"))).status).toBe(404)
    expect((await call("DELETE", `/repos/alice/secret/keys/${b.id}`, basic("alice"))).status).toBe(204)
    expect(await deployRows()).toEqual({ deploy: before.deploy - 2, keys: before.keys - 1 })
    expect((await call("DELETE", `/repos/alice/secret/keys/${b.id}`, basic("alice"))).status).toBe(404)
  })

  it("frees the key when its repository is deleted", async () => {
    expect((await call("POST", "/user/repos", basic("alice"), { name: "doomed" })).status).toBe(201)
    const k = keygen()
    expect((await call("POST", "/repos/alice/doomed/keys", basic("alice"), { title: "d", key: k.pub })).status).toBe(
      201
    )
    expect((await call("DELETE", "/repos/alice/doomed", basic("alice"))).status).toBe(204)
    expect((await call("POST", "/user/keys", basic("carol"), { title: "was-deploy", key: k.pub })).status).toBe(201)
  })

  it("is for the repository's admins: a writer gets 403, who cannot see the repository 404", async () => {
    const k = keygen()
    const before = await deployRows()
    const writer = await call("POST", "/repos/alice/app/keys", basic("bob"), { title: "bob", key: k.pub })
    expect(writer.status).toBe(403)
    expect((await call("GET", "/repos/alice/app/keys", basic("bob"))).status).toBe(403)
    expect((await call("GET", "/repos/alice/app/keys", basic("carol"))).status).toBe(403)
    expect((await call("GET", "/repos/alice/secret/keys", basic("carol"))).status).toBe(404)
    expect((await call("POST", "/repos/alice/secret/keys", basic("carol"), { title: "c", key: k.pub })).status).toBe(
      404
    )
    expect((await call("GET", "/repos/alice/app/keys")).status).toBe(401)
    expect((await call("GET", "/repos/alice/nothing/keys", basic("alice"))).status).toBe(404)
    const [first] = await json(await call("GET", "/repos/alice/app/keys", basic("alice")))
    expect((await call("DELETE", `/repos/alice/app/keys/${first.id}`, basic("bob"))).status).toBe(403)
    // A key of another repository is not found under this one.
    const [otherKey] = await json(await call("GET", "/repos/alice/other/keys", basic("alice")))
    expect((await call("GET", `/repos/alice/app/keys/${otherKey.id}`, basic("alice"))).status).toBe(404)
    expect((await call("DELETE", `/repos/alice/app/keys/${otherKey.id}`, basic("alice"))).status).toBe(404)
    expect(await deployRows()).toEqual(before)
  })

  it("needs the repository scope", async () => {
    const userOnly = await createToken(hearth, "alice", ["write:user"])
    expect((await call("GET", "/repos/alice/app/keys", `token ${userOnly}`)).status).toBe(403)
    const repo = await createToken(hearth, "alice", ["write:repository"])
    expect((await call("GET", "/repos/alice/app/keys", `token ${repo}`)).status).toBe(200)
    const reader = await createToken(hearth, "alice", ["read:repository"])
    expect(
      (await call("POST", "/repos/alice/app/keys", `token ${reader}`, { title: "r", key: keygen().pub })).status
    ).toBe(403)
  })
})
