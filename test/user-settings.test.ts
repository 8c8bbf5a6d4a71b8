// Issue 23 item 3: the instance's general settings (/settings/api|attachment|repository|ui, read
// from the configuration by anyone) and the signed-in user's settings (GET/PATCH /user/settings:
// only what is given changes; bad values are a 422 that changes nothing), with their effects: hidden
// pronouns for anonymous callers, the chosen theme on every web page, blobs over
// [api] DEFAULT_MAX_BLOB_SIZE without their content.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"
import { signedIn, WebClient } from "./support/web.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth({
    api: { MAX_RESPONSE_ITEMS: "40", DEFAULT_MAX_BLOB_SIZE: "16" },
    attachment: { MAX_SIZE: "7", MAX_FILES: "3", ALLOWED_TYPES: ".zip,.txt" },
    mirror: { ENABLED: "false" },
    service: { ENABLE_TIMETRACKING: "false" },
    ui: { REACTIONS: "+1, heart", THEMES: "forgejo-auto, light, dark", DEFAULT_THEME: "forgejo-auto" }
  })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

const settingsOf = async (user: string) => json(await request(hearth, "GET", "/user/settings", basic(user)))

describe("the instance's general settings", () => {
  it("are read from the configuration, by anyone", async () => {
    const api = await json(await request(hearth, "GET", "/settings/api"))
    expect(api).toEqual({
      max_response_items: 40,
      default_paging_num: 30,
      default_git_trees_per_page: 1000,
      default_max_blob_size: 16
    })
    expectSwagger(api, "GeneralAPISettings")
    const attachment = await json(await request(hearth, "GET", "/settings/attachment"))
    expect(attachment).toEqual({ enabled: true, allowed_types: ".zip,.txt", max_size: 7, max_files: 3 })
    expectSwagger(attachment, "GeneralAttachmentSettings")
    const repository = await json(await request(hearth, "GET", "/settings/repository"))
    expect(repository).toEqual({
      mirrors_disabled: true,
      http_git_disabled: false,
      migrations_disabled: false,
      stars_disabled: false,
      forks_disabled: false,
      time_tracking_disabled: true,
      lfs_disabled: true
    })
    expectSwagger(repository, "GeneralRepoSettings")
    const ui = await json(await request(hearth, "GET", "/settings/ui"))
    expect(ui).toEqual({ default_theme: "forgejo-auto", allowed_reactions: ["+1", "heart"], custom_emojis: [] })
    expectSwagger(ui, "GeneralUISettings")
  })

  it("refuses to start with a default theme that is not among the themes", async () => {
    await expect(startHearth({ ui: { THEMES: "light", DEFAULT_THEME: "dark" } })).rejects.toThrow(/DEFAULT_THEME/)
    await expect(startHearth({ ui: { THEMES: "light, purple" } })).rejects.toThrow(/THEMES/)
  })
})

describe("/user/settings", () => {
  it("answers the caller's settings, and only to a signed-in caller with the user scope", async () => {
    const user = await createUser(hearth)
    const settings = await settingsOf(user.name)
    expect(settings).toEqual({
      full_name: "",
      website: "",
      description: "",
      location: "",
      pronouns: "",
      language: "",
      theme: "",
      diff_view_style: "",
      hide_email: false,
      hide_pronouns: false,
      hide_activity: false,
      enable_repo_unit_hints: true
    })
    expectSwagger(settings, "UserSettings")
    expect((await request(hearth, "GET", "/user/settings")).status).toBe(401)
    const readOnly = await createToken(hearth, user.name, ["read:user"])
    expect((await request(hearth, "GET", "/user/settings", `token ${readOnly}`)).status).toBe(200)
    const refused = await request(hearth, "PATCH", "/user/settings", `token ${readOnly}`, { location: "Mars" })
    expect(refused.status).toBe(403)
    const elsewhere = await createToken(hearth, user.name, ["write:repository"])
    expect((await request(hearth, "GET", "/user/settings", `token ${elsewhere}`)).status).toBe(403)
    expect((await settingsOf(user.name)).location).toBe("")
  })

  it("changes only the members given, and the account's JSON shows them", async () => {
    const user = await createUser(hearth)
    await apiAs(hearth, "PATCH", "/user/settings", user.name, { location: "Lyon", pronouns: "she/her" })
    const changed = await apiAs(hearth, "PATCH", "/user/settings", user.name, {
      full_name: "Ada Lovelace",
      website: "https://example.org/ada",
      description: "Engines",
      language: "fr-FR",
      theme: "dark",
      diff_view_style: "split",
      hide_email: true,
      hide_activity: true,
      enable_repo_unit_hints: false
    })
    expect(changed).toEqual({
      full_name: "Ada Lovelace",
      website: "https://example.org/ada",
      description: "Engines",
      location: "Lyon",
      pronouns: "she/her",
      language: "fr-FR",
      theme: "dark",
      diff_view_style: "split",
      hide_email: true,
      hide_pronouns: false,
      hide_activity: true,
      enable_repo_unit_hints: false
    })
    expect(await settingsOf(user.name)).toEqual(changed)
    const me = await apiAs(hearth, "GET", "/user", user.name)
    expect(me).toMatchObject({ full_name: "Ada Lovelace", location: "Lyon", language: "fr-FR", pronouns: "she/her" })
  })

  it("refuses bad values with a message next to nothing changed", async () => {
    const user = await createUser(hearth)
    await apiAs(hearth, "PATCH", "/user/settings", user.name, { location: "Lyon" })
    const before = await settingsOf(user.name)
    const cases: ReadonlyArray<[Record<string, unknown>, RegExp]> = [
      [{ website: "javascript:alert(1)", location: "Paris" }, /website must be an http/],
      [{ full_name: "x".repeat(101) }, /full name must be at most 100/],
      [{ location: "y".repeat(51) }, /location must be at most 50/],
      [{ theme: "purple" }, /theme must be one of forgejo-auto, light, dark/],
      [{ diff_view_style: "sideways" }, /diff view style must be unified or split/],
      [{ language: "a-very-long-language" }, /language must be at most 10/]
    ]
    for (const [body, message] of cases) {
      const res = await request(hearth, "PATCH", "/user/settings", basic(user.name), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect((await json(res)).message, JSON.stringify(body)).toMatch(message)
    }
    const wrongType = await request(hearth, "PATCH", "/user/settings", basic(user.name), { hide_email: "yes" })
    expect(wrongType.status).toBe(422)
    expect(await settingsOf(user.name)).toEqual(before)
  })

  it("hides the pronouns from anonymous callers when the user keeps them private", async () => {
    const user = await createUser(hearth)
    await apiAs(hearth, "PATCH", "/user/settings", user.name, { pronouns: "they/them" })
    const seen = async (auth?: string) =>
      (await json(await request(hearth, "GET", `/users/${user.name}`, auth))).pronouns
    expect(await seen()).toBe("they/them")
    await apiAs(hearth, "PATCH", "/user/settings", user.name, { hide_pronouns: true })
    expect(await seen()).toBe("")
    const other = await createUser(hearth)
    expect(await seen(basic(other.name))).toBe("they/them")
    // The profile page follows the same rule.
    expect((await new WebClient(hearth.base).get(`/${user.name}`)).text).not.toContain("they/them")
    expect((await (await signedIn(hearth.base, other.name)).get(`/${user.name}`)).text).toContain("they/them")
  })

  it("a chosen theme colours every web page; none chosen: the instance's default", async () => {
    const user = await createUser(hearth)
    expect((await new WebClient(hearth.base).get("/user/login")).text).toContain('data-color-mode="auto"')
    const client = await signedIn(hearth.base, user.name)
    const page = async () => (await client.get("/explore/repos")).text
    expect(await page()).toContain('data-color-mode="auto"')
    await apiAs(hearth, "PATCH", "/user/settings", user.name, { theme: "dark" })
    expect(await page()).toContain('data-color-mode="dark"')
  })
})

describe("[api] DEFAULT_MAX_BLOB_SIZE", () => {
  it("a blob over it comes without its content, its size and sha still given", async () => {
    const user = await createUser(hearth)
    await apiAs(hearth, "POST", "/user/repos", user.name, { name: "blobs" })
    const write = async (path: string, text: string) =>
      (
        await apiAs(hearth, "POST", `/repos/${user.name}/blobs/contents/${path}`, user.name, {
          content: Buffer.from(text).toString("base64")
        })
      ).content.sha as string
    const small = await write("small.txt", "0123456789abcdef") // 16 bytes: at the limit
    const large = await write("large.txt", "0123456789abcdefg") // 17 bytes: over it
    const blob = async (sha: string) => apiAs(hearth, "GET", `/repos/${user.name}/blobs/git/blobs/${sha}`, user.name)
    expect(await blob(small)).toMatchObject({ size: 16, content: Buffer.from("0123456789abcdef").toString("base64") })
    expect(await blob(large)).toMatchObject({ sha: large, size: 17, content: "" })
  })
})
