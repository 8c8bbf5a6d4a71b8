// Pins (CONTRACT-ISSUES §14) over real HTTP: repository admins only, `[repository.issue]
// MAX_PINNED`, order kept without gaps on unpin, move and delete, the pinned list and
// `new_pin_allowed`, and the pin/unpin timeline comments.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth({ "repository.issue": { MAX_PINNED: "3" } })
  for (const username of ["owner", "writer", "stranger"]) await createUser(hearth, { username })
  for (const [name, priv] of [
    ["pins", false],
    ["priv", true]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name, private: priv })).status).toBe(201)
  }
  expect(
    (await request(hearth, "PUT", "/repos/owner/pins/collaborators/writer", basic("owner"), { permission: "write" }))
      .status
  ).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

const newIssue = async (repo = "pins") =>
  (await json(await request(hearth, "POST", `/repos/owner/${repo}/issues`, basic("owner"), { title: "t" })))
    .number as number
const pinned = async () =>
  (await json(await request(hearth, "GET", "/repos/owner/pins/issues/pinned"))).map((i: any) => [i.number, i.pin_order])
const pin = (n: number, who = "owner") => request(hearth, "POST", `/repos/owner/pins/issues/${n}/pin`, basic(who))

describe("pins", () => {
  it("pins in order up to MAX_PINNED, unpins, moves and forgets deleted issues", async () => {
    const [a, b, c, d] = [await newIssue(), await newIssue(), await newIssue(), await newIssue()]
    expect(await pinned()).toEqual([])
    expect(await json(await request(hearth, "GET", "/repos/owner/pins/new_pin_allowed"))).toEqual({
      issues: true,
      pull_requests: true
    })
    for (const n of [a, b, c]) expect((await pin(n)).status).toBe(204)
    expect((await pin(a)).status).toBe(204) // already pinned: no-op
    expect(await pinned()).toEqual([
      [a, 1],
      [b, 2],
      [c, 3]
    ])
    expect((await json(await request(hearth, "GET", `/repos/owner/pins/issues/${b}`))).pin_order).toBe(2)
    const full = await pin(d)
    expect(full.status).toBe(400)
    expect((await json(full)).message).toMatch(/maximum number of pinned issues \(3\)/)
    expect((await json(await request(hearth, "GET", "/repos/owner/pins/new_pin_allowed"))).issues).toBe(false)

    // Move c to the front; a position past the end is clamped.
    expect((await request(hearth, "PATCH", `/repos/owner/pins/issues/${c}/pin/1`, basic("owner"))).status).toBe(204)
    expect(await pinned()).toEqual([
      [c, 1],
      [a, 2],
      [b, 3]
    ])
    expect((await request(hearth, "PATCH", `/repos/owner/pins/issues/${c}/pin/99`, basic("owner"))).status).toBe(204)
    expect(await pinned()).toEqual([
      [a, 1],
      [b, 2],
      [c, 3]
    ])
    expect((await request(hearth, "PATCH", `/repos/owner/pins/issues/${c}/pin/0`, basic("owner"))).status).toBe(422)

    // Unpinning closes the gap; unpinning again is a no-op.
    expect((await request(hearth, "DELETE", `/repos/owner/pins/issues/${a}/pin`, basic("owner"))).status).toBe(204)
    expect((await request(hearth, "DELETE", `/repos/owner/pins/issues/${a}/pin`, basic("owner"))).status).toBe(204)
    expect(await pinned()).toEqual([
      [b, 1],
      [c, 2]
    ])
    // Deleting a pinned issue unpins it first.
    expect((await request(hearth, "DELETE", `/repos/owner/pins/issues/${b}`, basic("owner"))).status).toBe(204)
    expect(await pinned()).toEqual([[c, 1]])

    const timeline = await json(await request(hearth, "GET", `/repos/owner/pins/issues/${a}/timeline`))
    expect(timeline.map((t: any) => t.type)).toEqual(["pin", "unpin"])
  })

  it("only repository admins may pin; readers see the list; private repositories are 404", async () => {
    const n = await newIssue()
    const writer = await pin(n, "writer")
    expect(writer.status).toBe(403)
    expect((await json(writer)).message).toBe(
      "user should be an owner or a collaborator with admin write of a repository"
    )
    expect((await request(hearth, "POST", `/repos/owner/pins/issues/${n}/pin`)).status).toBe(401)
    expect((await request(hearth, "DELETE", `/repos/owner/pins/issues/${n}/pin`, basic("stranger"))).status).toBe(403)
    expect((await pinned()).some(([m]: [number]) => m === n)).toBe(false)
    const p = await newIssue("priv")
    expect((await request(hearth, "GET", "/repos/owner/priv/issues/pinned", basic("stranger"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/owner/priv/new_pin_allowed", basic("stranger"))).status).toBe(404)
    expect((await request(hearth, "POST", `/repos/owner/priv/issues/${p}/pin`, basic("stranger"))).status).toBe(404)
    expect((await request(hearth, "POST", "/repos/owner/pins/issues/9999/pin", basic("owner"))).status).toBe(404)
  })
})
