// A real client against the avatar routes: the gitea-js SDK (1.23, npm) sets and deletes the
// avatars of its user, an organization and a repository, and reads the avatar_url that follow.
// gitea-js 1.23 sends these three bodies without a Content-Type (Forgejo's swagger names none for
// them), which fetch makes text/plain; Hearth answers that 415 as on every JSON route, so the calls
// name the JSON type.
import { ContentType, giteaApi } from "gitea-js"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createToken, createUser, type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let alice: ReturnType<typeof giteaApi>
let image: string
const asJson = { type: ContentType.Json }

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  alice = giteaApi(hearth.base, { token: await createToken(hearth, "alice") })
  await alice.orgs.orgCreate({ username: "guild" })
  await alice.user.createCurrentUserRepo({ name: "tool" })
  const png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#5050a0" } })
    .png()
    .toBuffer()
  image = png.toString("base64")
}, 60_000)
afterAll(async () => {
  await hearth?.close()
})

describe("gitea-js on avatars", () => {
  it("sets and deletes the avatars of its user, an organization and a repository", async () => {
    expect((await alice.user.userUpdateAvatar({ image }, asJson)).status).toBe(204)
    const mine = (await alice.user.userGetCurrent()).data.avatar_url!
    expect(mine).toMatch(/\/avatars\/[0-9a-f]{64}$/)
    expect((await fetch(mine)).headers.get("content-type")).toBe("image/png")
    expect((await alice.user.userDeleteAvatar()).status).toBe(204)
    expect((await alice.user.userGetCurrent()).data.avatar_url).toBe(`${hearth.base}/avatars/identicon/alice`)

    expect((await alice.orgs.orgUpdateAvatar("guild", { image }, asJson)).status).toBe(204)
    expect((await alice.orgs.orgGet("guild")).data.avatar_url).toBe(mine)
    expect((await alice.orgs.orgDeleteAvatar("guild")).status).toBe(204)
    expect((await alice.orgs.orgGet("guild")).data.avatar_url).toBe(`${hearth.base}/avatars/identicon/guild`)

    expect((await alice.repos.repoUpdateAvatar("alice", "tool", { image }, asJson)).status).toBe(204)
    const repo = (await alice.repos.repoGet("alice", "tool")).data.avatar_url!
    expect(repo).toBe(mine.replace("/avatars/", "/repo-avatars/"))
    expect((await alice.repos.repoDeleteAvatar("alice", "tool")).status).toBe(204)
    expect((await alice.repos.repoGet("alice", "tool")).data.avatar_url).toBe("")
  })
})
