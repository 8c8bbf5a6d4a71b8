// The webhook settings pages under [security] DISABLE_WEBHOOKS (Forgejo's `reqWebhooksEnabled`):
// no Webhooks entry in the repository's or the account's settings menu, and every hook page of a
// repository, an organization and the user is a 403 page that says why.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth({ security: { DISABLE_WEBHOOKS: "true" } })
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "code", auto_init: true })).status).toBe(
    201
  )
  expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: "guild" })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("DISABLE_WEBHOOKS", () => {
  it("hides the menu entries and answers every hook page with a 403 page", async () => {
    const client = new WebClient(hearth.base)
    expect((await client.signIn("alice")).status).toBe(303)
    const settings = await client.get("/alice/code/settings")
    expect(settings.status).toBe(200)
    expect(settings.text).toContain('href="/alice/code/settings/branches"')
    expect(settings.text).not.toContain('href="/alice/code/settings/hooks"')
    expect((await client.get("/user/settings")).text).not.toContain('href="/user/settings/hooks"')
    for (const path of [
      "/alice/code/settings/hooks",
      "/alice/code/settings/hooks/forgejo/new",
      "/org/guild/settings/hooks",
      "/user/settings/hooks"
    ]) {
      const page = await client.get(path)
      expect(page.status, path).toBe(403)
      expect(page.text, path).toContain("DISABLE_WEBHOOKS")
    }
    const created = await client.post(
      "/alice/code/settings/hooks/forgejo/new",
      { payload_url: "http://127.0.0.1:9/x", content_type: "json", events: "push_only", active: "on" },
      csrfOf(settings.text)
    )
    expect(created.status).toBe(403)
  })
})
