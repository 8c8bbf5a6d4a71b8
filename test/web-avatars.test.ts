// The avatar forms of the web's settings (Forgejo's /user/settings/avatar and its delete): an
// upload through the multipart form changes the picture every page shows (an <img> of the stored
// avatar instead of the inline identicon), a refused one says why and changes nothing, an expired
// form stores nothing, and the delete button gives the identicon back.
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn, type WebClient } from "./support/web.ts"

let hearth: Hearth

/** POSTs a multipart form with the client's cookies (what a browser sends for an upload form). */
const upload = async (client: WebClient, path: string, form: FormData) => {
  const res = await fetch(`${hearth.base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    body: form
  })
  return { status: res.status, location: res.headers.get("location") ?? undefined, text: await res.text() }
}

const avatarForm = (csrf: string, bytes: Uint8Array, name = "me.png") => {
  const form = new FormData()
  form.append("_csrf", csrf)
  form.append("avatar", new Blob([bytes]), name)
  return form
}

const IMG = /<img class="avatar circle" src="\/avatars\/([0-9a-f]{64})\?size=\d+" width="\d+" height="\d+" alt=""/

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "painter" })
  await createUser(hearth, { username: "helper" })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("the avatar form of the profile settings", () => {
  it("uploads a picture that the profile and the API then show, and deletes it", async () => {
    const client = await signedIn(hearth.base, "painter")
    const page = await client.get("/user/settings")
    expect(page.text).toContain('data-testid="avatar-form"')
    expect(page.text).toContain('enctype="multipart/form-data"')
    expect(page.text).not.toMatch(IMG)
    expect(page.text).not.toContain('action="/user/settings/avatar/delete"')

    const picture = await sharp({ create: { width: 120, height: 80, channels: 3, background: "#884422" } })
      .png()
      .toBuffer()
    const sent = await upload(client, "/user/settings/avatar", avatarForm(csrfOf(page.text), picture))
    expect(sent.status).toBe(303)
    expect(sent.location).toBe("/user/settings?done=avatar")

    const after = await client.get("/user/settings?done=avatar")
    expect(after.text).toContain("Your avatar has been changed.")
    const hash = IMG.exec(after.text)?.[1]
    expect(hash).toBeDefined()
    expect((await apiAs(hearth, "GET", "/user", "painter")).avatar_url).toBe(`${hearth.base}/avatars/${hash}`)
    // The profile page shows it too, as an image with no text of its own (the name is beside it).
    const profile = await client.get("/painter")
    expect(profile.text).toMatch(IMG)
    const served = await fetch(`${hearth.base}/avatars/${hash}?size=64`)
    expect(served.status).toBe(200)
    expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).width).toBe(64)

    const deleted = await client.submit("/user/settings", {}, "/user/settings/avatar/delete")
    expect(deleted.status).toBe(303)
    const cleared = await client.get("/user/settings")
    expect(cleared.text).not.toMatch(IMG)
    expect((await apiAs(hearth, "GET", "/user", "painter")).avatar_url).toBe(`${hearth.base}/avatars/identicon/painter`)
  })

  it("says why a file is refused and changes nothing; an expired form stores nothing", async () => {
    const client = await signedIn(hearth.base, "painter")
    const page = await client.get("/user/settings")
    const refused = await upload(
      client,
      "/user/settings/avatar",
      avatarForm(csrfOf(page.text), Buffer.from("plain text"), "a.txt")
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain("the file is not a PNG, JPEG, GIF or WebP image")
    const picture = await sharp({ create: { width: 10, height: 10, channels: 3, background: "#000" } })
      .png()
      .toBuffer()
    const expired = await upload(client, "/user/settings/avatar", avatarForm("not-the-token", picture))
    expect(expired.status).toBe(400)
    expect((await apiAs(hearth, "GET", "/user", "painter")).avatar_url).toBe(`${hearth.base}/avatars/identicon/painter`)
  })
})

describe("the avatar form of a repository's settings", () => {
  it("an admin uploads and deletes it; a writer is refused", async () => {
    await apiAs(hearth, "POST", "/user/repos", "painter", { name: "easel" })
    await apiAs(hearth, "PUT", "/repos/painter/easel/collaborators/helper", "painter", { permission: "write" })
    const client = await signedIn(hearth.base, "painter")
    const page = await client.get("/painter/easel/settings")
    expect(page.text).toContain('action="/painter/easel/settings/avatar"')
    const picture = await sharp({ create: { width: 50, height: 50, channels: 3, background: "#226688" } })
      .png()
      .toBuffer()
    const sent = await upload(client, "/painter/easel/settings/avatar", avatarForm(csrfOf(page.text), picture))
    expect(sent.status).toBe(303)
    const url: string = (await apiAs(hearth, "GET", "/repos/painter/easel", "painter")).avatar_url
    expect(url).toMatch(/\/repo-avatars\/[0-9a-f]{64}$/)
    const shown = await client.get("/painter/easel/settings?done=avatar")
    expect(shown.text).toContain(
      `<img class="avatar" src="/repo-avatars/${url.slice(-64)}?size=192" width="96" height="96" alt="">`
    )

    const helper = await signedIn(hearth.base, "helper")
    const helperPage = await helper.get("/painter")
    const refused = await upload(helper, "/painter/easel/settings/avatar", avatarForm(csrfOf(helperPage.text), picture))
    expect(refused.status).toBe(403)
    expect(refused.text).toContain("administrators may change its settings")

    const deleted = await client.submit("/painter/easel/settings", {}, "/painter/easel/settings/avatar/delete")
    expect(deleted.status).toBe(303)
    expect((await apiAs(hearth, "GET", "/repos/painter/easel", "painter")).avatar_url).toBe("")
  })
})
