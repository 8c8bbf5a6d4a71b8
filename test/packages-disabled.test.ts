// `[packages] ENABLED = false`: every registry route and the management API answer 404 (Forgejo
// keeps /api/v1/packages while its registries are off; the specification wins here).
import { afterAll, beforeAll, expect, it } from "vitest"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth({ packages: { ENABLED: "false" } })
  await createUser(hearth, { username: "alice" })
}, 60_000)
afterAll(() => hearth?.close())

it("answers 404 on the registries and on /api/v1/packages, and stores nothing", async () => {
  const registry = `${hearth.base}/api/packages/alice/generic/tool/1/file.txt`
  const put = await fetch(registry, { method: "PUT", headers: { authorization: basic("alice") }, body: "x" })
  expect(put.status).toBe(404)
  expect((await fetch(registry, { headers: { authorization: basic("alice") } })).status).toBe(404)
  expect((await fetch(registry, { method: "DELETE", headers: { authorization: basic("alice") } })).status).toBe(404)
  for (const [method, path] of [
    ["GET", "/packages/alice"],
    ["GET", "/packages/alice/generic/tool/1"],
    ["GET", "/packages/alice/generic/tool/1/files"],
    ["DELETE", "/packages/alice/generic/tool/1"],
    ["POST", "/packages/alice/generic/tool/-/link/x"],
    ["POST", "/packages/alice/generic/tool/-/unlink"]
  ] as const) {
    expect((await request(hearth, method, path, basic("alice"))).status, `${method} ${path}`).toBe(404)
  }
})

it("answers 404 on the container registry at /v2/", async () => {
  for (const [method, path] of [
    ["GET", "/v2/"],
    ["GET", "/v2/token"],
    ["POST", "/v2/alice/app/blobs/uploads/"],
    ["GET", "/v2/alice/app/tags/list"]
  ] as const) {
    const res = await fetch(`${hearth.base}${path}`, { method, headers: { authorization: basic("alice") } })
    expect(res.status, `${method} ${path}`).toBe(404)
  }
})

it("Pub: publishing and the version list answer 404", async () => {
  const pub = `${hearth.base}/api/packages/alice/pub/api/packages`
  for (const url of [`${pub}/versions/new`, `${pub}/some_pkg`, `${pub}/some_pkg/files/1.0.0.tar.gz`])
    expect((await fetch(url, { headers: { authorization: basic("alice") } })).status, url).toBe(404)
  const post = await fetch(`${pub}/versions/new/upload`, {
    method: "POST",
    headers: { authorization: basic("alice"), "content-type": "multipart/form-data; boundary=x" },
    body: "--x--\r\n"
  })
  expect(post.status).toBe(404)
})
