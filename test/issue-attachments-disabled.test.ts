// `[attachment] ENABLED = false` (Forgejo's `mustEnableAttachments`): every attachment route of
// issues and comments answers 404, before any credential is looked at; the tracker works on.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth({ attachment: { ENABLED: "false" } })
  await createUser(hearth, { username: "owner" })
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "repo" })).status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("[attachment] ENABLED = false", () => {
  it("answers 404 on every /assets route, signed in or not; issues and comments keep working", async () => {
    const issue = await json(await request(hearth, "POST", "/repos/owner/repo/issues", basic("owner"), { title: "t" }))
    expect(issue.assets).toEqual([])
    const comment = await json(
      await request(hearth, "POST", `/repos/owner/repo/issues/${issue.number}/comments`, basic("owner"), { body: "c" })
    )
    expect(comment.assets).toEqual([])
    const form = () => {
      const body = new FormData()
      body.append("attachment", new Blob(["x"]), "x.txt")
      return body
    }
    for (const base of [
      `/repos/owner/repo/issues/${issue.number}/assets`,
      `/repos/owner/repo/issues/comments/${comment.id}/assets`
    ]) {
      for (const auth of [basic("owner"), undefined]) {
        const headers = auth === undefined ? {} : { authorization: auth }
        expect((await fetch(hearth.api(base), { headers })).status, base).toBe(404)
        expect((await fetch(hearth.api(base), { method: "POST", headers, body: form() })).status, base).toBe(404)
        expect((await fetch(hearth.api(`${base}/1`), { headers })).status, base).toBe(404)
        expect((await request(hearth, "PATCH", `${base}/1`, auth, { name: "y" })).status, base).toBe(404)
        expect((await request(hearth, "DELETE", `${base}/1`, auth)).status, base).toBe(404)
      }
    }
  })
})
