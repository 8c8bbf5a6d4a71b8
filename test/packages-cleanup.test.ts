// Package cleanup rules (CONTRACT-PACKAGES §9; Forgejo's TestPackageCleanup cases): managed by
// site admins over /api/v1/admin/packages/cleanup-rules, applied by the periodic run (here run on
// demand): keep_count, keep_pattern, remove_days, remove_pattern, match_full_name, disabled rules.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

/** Uploads `versions` of `name` for `owner`, the first the oldest (each `days` older than the next). */
const publish = async (owner: string, name: string, versions: ReadonlyArray<string>) => {
  for (const [i, version] of versions.entries()) {
    const res = await fetch(`${hearth.base}/api/packages/${owner}/generic/${name}/${version}/file.txt`, {
      method: "PUT",
      headers: { authorization: basic(owner) },
      body: `${name} ${version}`
    })
    expect(res.status).toBe(201)
    const daysOld = (versions.length - i) * 10
    await hearth.sql(
      (s) => s`UPDATE package_versions SET created_at = now() - make_interval(days => ${daysOld})
        WHERE version = ${version} AND package_id = (SELECT p.id FROM packages p JOIN users u ON u.id = p.owner_id
          WHERE u.lower_name = ${owner} AND p.lower_name = ${name.toLowerCase()})`
    )
  }
}
const versionsOf = async (owner: string, name: string) =>
  (await json(await request(hearth, "GET", `/packages/${owner}?q=${name}`, basic("root"))))
    .filter((p: any) => p.name === name)
    .map((p: any) => p.version)
const rule = async (body: object) => {
  const res = await request(hearth, "POST", "/admin/packages/cleanup-rules", basic("root"), body)
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const runRules = async () => {
  const res = await request(hearth, "POST", "/admin/packages/cleanup-rules/-/run", basic("root"))
  expect(res.status).toBe(200)
  return (await json(res)).removed as number
}

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["keeper", "patterns", "ages", "removing", "full", "off", "plain"])
    await createUser(hearth, { username })
}, 60_000)
afterAll(() => hearth?.close())

describe("managing rules", () => {
  it("is for site admins; rules are checked (type, counts, patterns) and one per owner and type", async () => {
    const body = { owner: "plain", type: "generic", keep_count: 1 }
    expect((await request(hearth, "POST", "/admin/packages/cleanup-rules", basic("plain"), body)).status).toBe(403)
    for (const bad of [
      { ...body, type: "nosuch" },
      { ...body, keep_count: -1 },
      { ...body, keep_pattern: "(" }
    ]) {
      expect((await request(hearth, "POST", "/admin/packages/cleanup-rules", basic("root"), bad)).status).toBe(422)
    }
    const created = await rule(body)
    expect(created).toMatchObject({ owner: "plain", type: "generic", enabled: true, keep_count: 1, remove_days: 0 })
    expect((await request(hearth, "POST", "/admin/packages/cleanup-rules", basic("root"), body)).status).toBe(409)
    const edited = await json(
      await request(hearth, "PATCH", `/admin/packages/cleanup-rules/${created.id}`, basic("root"), { enabled: false })
    )
    expect(edited).toMatchObject({ enabled: false, keep_count: 1 })
    const listed = await json(await request(hearth, "GET", "/admin/packages/cleanup-rules?owner=plain", basic("root")))
    expect(listed.map((r: any) => r.id)).toEqual([created.id])
    expect((await request(hearth, "DELETE", `/admin/packages/cleanup-rules/${created.id}`, basic("root"))).status).toBe(
      204
    )
    expect((await request(hearth, "DELETE", `/admin/packages/cleanup-rules/${created.id}`, basic("root"))).status).toBe(
      404
    )
  })
})

describe("running rules", () => {
  it("applies keep_count, keep_pattern, remove_days, remove_pattern and match_full_name; disabled rules do nothing", async () => {
    await publish("keeper", "app", ["1.0", "1.1", "1.2", "1.3"])
    await rule({ owner: "keeper", type: "generic", keep_count: 2 })
    await publish("patterns", "app", ["1.0", "2.0-rc", "2.0", "3.0-rc"])
    await rule({ owner: "patterns", type: "generic", keep_count: 1, keep_pattern: "2\\.0" })
    // Ages: 40, 30, 20 and 10 days.
    await publish("ages", "app", ["a", "b", "c", "d"])
    await rule({ owner: "ages", type: "generic", remove_days: 25 })
    await publish("removing", "app", ["1.0", "1.0-dev", "2.0", "2.0-DEV"])
    await rule({ owner: "removing", type: "generic", remove_pattern: ".*-dev" })
    await publish("full", "keepme", ["1", "2"])
    await publish("full", "dropme", ["1", "2"])
    await rule({ owner: "full", type: "generic", remove_pattern: "dropme/.*", match_full_name: true })
    await publish("off", "app", ["1", "2", "3"])
    await rule({ owner: "off", type: "generic", enabled: false, keep_count: 1 })

    // Patterns are anchored: "2\\.0" keeps 2.0, not 2.0-rc.
    expect(await runRules()).toBe(2 + 2 + 2 + 2 + 2)
    expect(await versionsOf("keeper", "app")).toEqual(["1.3", "1.2"])
    expect(await versionsOf("patterns", "app")).toEqual(["3.0-rc", "2.0"])
    expect(await versionsOf("ages", "app")).toEqual(["d", "c"])
    expect(await versionsOf("removing", "app")).toEqual(["2.0", "1.0"])
    expect(await versionsOf("full", "keepme")).toEqual(["2", "1"])
    expect(await versionsOf("full", "dropme")).toEqual([])
    expect(await versionsOf("off", "app")).toEqual(["3", "2", "1"])
    // A package left without versions is deleted; its files' blobs are given back.
    const left = await hearth.sql((s) =>
      Effect.map(s`SELECT count(*) AS n FROM packages WHERE lower_name = 'dropme'`, (rows) => Number(rows[0]!.n))
    )
    expect(left).toBe(0)
    const held = await hearth.sql((s) =>
      Effect.map(
        s`SELECT coalesce(sum(refcount), 0) AS n FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM package_files)
          AND sha256 IN (SELECT sha256 FROM blobs WHERE size < 20)`,
        (rows) => Number(rows[0]!.n)
      )
    )
    expect(held).toBe(0)
    // Nothing more to do.
    expect(await runRules()).toBe(0)
  })
})
