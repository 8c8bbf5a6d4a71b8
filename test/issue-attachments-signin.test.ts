// `[service] REQUIRE_SIGNIN_VIEW`: an attachment of a public repository is downloaded by signed-in
// callers only; anonymous visitors get 404, as they see nothing else of the forge.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth({ service: { REQUIRE_SIGNIN_VIEW: "true" } })
  await createUser(hearth, { username: "owner" })
  await createUser(hearth, { username: "someone" })
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "open" })).status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("downloads under [service] REQUIRE_SIGNIN_VIEW", () => {
  it("are 404 to anonymous visitors and served to anyone signed in", async () => {
    const issue = await json(await request(hearth, "POST", "/repos/owner/open/issues", basic("owner"), { title: "t" }))
    const form = new FormData()
    form.append("attachment", new Blob(["public but signed-in only"]), "note.txt")
    const res = await fetch(hearth.api(`/repos/owner/open/issues/${issue.number}/assets`), {
      method: "POST",
      headers: { authorization: basic("owner") },
      body: form
    })
    expect(res.status).toBe(201)
    const url = (await json(res)).browser_download_url
    expect((await fetch(url)).status).toBe(404)
    const seen = await fetch(url, { headers: { authorization: basic("someone") } })
    expect(seen.status).toBe(200)
    expect(await seen.text()).toBe("public but signed-in only")
  })
})
