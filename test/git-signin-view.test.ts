// Git over HTTP with `[service] REQUIRE_SIGNIN_VIEW` (issue 15 item 1): the API refuses anonymous
// callers, so git does too, as Forgejo's githttp.go asks for credentials (401) even for a public
// repository; signed-in callers clone as usual.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const dir = mkdtempSync(join(tmpdir(), "hearth-git-signin-"))

beforeAll(async () => {
  hearth = await startHearth({ service: { REQUIRE_SIGNIN_VIEW: "true" } })
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "pub", auto_init: true })).status).toBe(
    201
  )
})
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("git over HTTP when REQUIRE_SIGNIN_VIEW is set", () => {
  it("asks anonymous callers for credentials, even for a public repository", async () => {
    const res = await fetch(`${hearth.base}/alice/pub.git/info/refs?service=git-upload-pack`)
    expect(res.status).toBe(401)
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic realm=/)
    const target = join(dir, "anonymous")
    const cloned = await gitRun(dir, ["clone", "-q", "--depth", "1", `${hearth.base}/alice/pub.git`, target])
    expect(cloned.code).not.toBe(0)
    expect(cloned.stderr).toContain("could not read Username")
    expect(existsSync(target)).toBe(false)
  })

  it("lets a signed-in caller clone", async () => {
    const url = new URL(`${hearth.base}/alice/pub.git`)
    url.username = "alice"
    url.password = "password123"
    const target = join(dir, "signed-in")
    const cloned = await gitRun(dir, ["clone", "-q", "--depth", "1", url.toString(), target])
    expect(cloned.code, cloned.stderr).toBe(0)
    expect(existsSync(join(target, "README.md"))).toBe(true)
  })
})
