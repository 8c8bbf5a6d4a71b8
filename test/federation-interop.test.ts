// Federation between two Hearth instances on loopback (issue 8 item 6): a user of A follows a
// user of B (Follow → Accept) and receives B's user's public activity; a user of A stars a
// repository of B (ForgeFed Like) and B's stars_count rises, then unstars (Undo) and it falls.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, hostOf, startFederated } from "./support/federation.ts"
import { basic, createUser, type Hearth, json, request } from "./support/hearth.ts"

let a: Hearth
let b: Hearth
beforeAll(async () => {
  ;[a, b] = await Promise.all([startFederated(), startFederated()])
  await createUser(a, { username: "Alice" })
  await createUser(b, { username: "Bob" })
})
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()])
})

describe("follows between instances", () => {
  it("a user on A follows a user on B, B accepts, and A's user receives B's user's activity", async () => {
    const bob = `bob@${hostOf(b)}`
    const res = await request(a, "PUT", `/user/following/${bob}`, basic("Alice"))
    expect(res.status, await res.clone().text()).toBe(204)
    expect((await request(a, "GET", `/user/following/${bob}`, basic("Alice"))).status).toBe(204)

    // B records the follower and answers with an Accept, which A records.
    const followers = await eventually(
      async () => {
        const list = await json(await request(b, "GET", "/user/federation/followers", basic("Bob")))
        return list.length > 0 ? list : undefined
      },
      15_000,
      "B to record the follower"
    )
    expect(followers[0].id).toBe(`${a.base}/api/v1/activitypub/user/Alice`)
    const following = await eventually(
      async () => {
        const list = await json(await request(a, "GET", "/user/federation/following", basic("Alice")))
        return list[0]?.accepted === true ? list : undefined
      },
      15_000,
      "A to see the Accept"
    )
    expect(following[0]).toMatchObject({ id: `${b.base}/api/v1/activitypub/user/Bob`, handle: bob, username: "Bob" })

    // Bob creates a public repository: Alice on A receives it as a Create of a Note.
    expect((await request(b, "POST", "/user/repos", basic("Bob"), { name: "hello" })).status).toBe(201)
    const received = await eventually(
      async () => {
        const list = await json(await request(a, "GET", "/user/federation/activities", basic("Alice")))
        return list.length > 0 ? list : undefined
      },
      15_000,
      "A to receive Bob's activity"
    )
    expect(received[0].activity.type).toBe("Create")
    expect(received[0].activity.object.type).toBe("Note")
    expect(received[0].activity.object.content).toContain(`${b.base}/Bob/hello`)

    // Unfollowing sends an Undo: B no longer lists the follower.
    expect((await request(a, "DELETE", `/user/following/${bob}`, basic("Alice"))).status).toBe(204)
    expect((await request(a, "GET", `/user/following/${bob}`, basic("Alice"))).status).toBe(404)
    await eventually(
      async () => {
        const list = await json(await request(b, "GET", "/user/federation/followers", basic("Bob")))
        return list.length === 0 ? true : undefined
      },
      15_000,
      "B to drop the follower"
    )
  })
})

describe("stars between instances", () => {
  it("a user on A stars a repository on B: B's stars_count rises, and falls after the unstar", async () => {
    expect((await request(b, "POST", "/user/repos", basic("Bob"), { name: "starry" })).status).toBe(201)
    const stars = async () => (await json(await request(b, "GET", "/repos/Bob/starry"))).stars_count as number
    expect(await stars()).toBe(0)

    const path = `/user/starred/bob@${hostOf(b)}/starry`
    const res = await request(a, "PUT", path, basic("Alice"))
    expect(res.status, await res.clone().text()).toBe(204)
    expect((await request(a, "GET", path, basic("Alice"))).status).toBe(204)
    await eventually(async () => ((await stars()) === 1 ? true : undefined), 15_000, "B's stars_count to rise")

    expect((await request(a, "DELETE", path, basic("Alice"))).status).toBe(204)
    expect((await request(a, "GET", path, basic("Alice"))).status).toBe(404)
    await eventually(async () => ((await stars()) === 0 ? true : undefined), 15_000, "B's stars_count to fall")
  })
})
