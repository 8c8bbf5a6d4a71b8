// Issue 17 item 1 (account settings) over plain HTTP: SSH and GPG keys (added with KeysService's
// and GpgService's rules, refusals next to the field with what was typed kept, deleting, someone
// else's key a 404), access tokens (scopes from the form, the token shown once and working over
// the API within its scopes, deleting) and OAuth2 applications (the secret shown once, editing,
// refusals next to the field, deleting); key titles and names from the XSS corpus shown as text.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as openpgp from "openpgp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const dir = mkdtempSync(join(tmpdir(), "hearth-web-keys-"))
const web = () => new WebClient(hearth.base)

beforeAll(async () => {
  hearth = await startHearth()
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

let n = 0
const keygen = () => {
  const file = join(dir, `k${++n}`)
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `c${n}@test`, "-f", file])
  const pub = readFileSync(`${file}.pub`, "utf8").trim()
  const fingerprint = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", `${file}.pub`], {
    encoding: "utf8"
  }).split(" ")[1]!
  return { pub, fingerprint }
}

const signedIn = async () => {
  const user = await createUser(hearth)
  const client = web()
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

describe("SSH keys", () => {
  it("adds a key, lists it, refuses bad input next to the field, deletes it", async () => {
    const { user, client } = await signedIn()
    const key = keygen()
    const page = await client.get("/user/settings/keys")
    expect(page.text).toContain("There are no SSH keys on this account.")
    const added = await client.post(
      "/user/settings/keys",
      { type: "ssh", ssh_title: "laptop", ssh_content: key.pub },
      csrfOf(page.text)
    )
    expect(added.status).toBe(303)
    expect(added.location).toBe("/user/settings/keys?done=ssh-added")
    const listed = await client.get(added.location!)
    expect(listed.text).toContain("The SSH key has been added.")
    expect(listed.text).toMatch(/data-testid="ssh-key-title">laptop</)
    expect(listed.text).toContain(key.fingerprint)
    const api = (await json(await request(hearth, "GET", "/user/keys", basic(user.name)))) as Array<{
      id: number
      title: string
      fingerprint: string
    }>
    expect(api).toEqual([expect.objectContaining({ title: "laptop", fingerprint: key.fingerprint })])

    // The same key again (on any account), a title used, content that is no key, nothing at all.
    const other = await signedIn()
    const again = await other.client.submit("/user/settings/keys", {
      type: "ssh",
      ssh_title: "mine",
      ssh_content: key.pub
    })
    expect(again.status).toBe(422)
    expect(again.text).toMatch(/data-testid="error-ssh_content">Key content has been used as non-deploy key/)
    expect(again.text).toContain('value="mine"')
    expect(again.text).toContain(`>${key.pub}</textarea>`)
    const title = await client.submit("/user/settings/keys", {
      type: "ssh",
      ssh_title: "laptop",
      ssh_content: keygen().pub
    })
    expect(title.text).toMatch(/data-testid="error-ssh_title">Key title has been used/)
    const garbage = await client.submit("/user/settings/keys", {
      type: "ssh",
      ssh_title: "garbage",
      ssh_content: "ssh-ed25519 not-base64!"
    })
    expect(garbage.status).toBe(422)
    expect(garbage.text).toMatch(/data-testid="error-ssh_content">/)
    expect(garbage.text).toContain(">ssh-ed25519 not-base64!</textarea>")
    const nothing = await client.submit("/user/settings/keys", { type: "ssh", ssh_title: "", ssh_content: "" })
    expect(nothing.text).toMatch(/data-testid="error-ssh_title">\[Title\]: Required/)
    const long = await client.submit("/user/settings/keys", {
      type: "ssh",
      ssh_title: "t".repeat(256),
      ssh_content: keygen().pub
    })
    expect(long.text).toMatch(/data-testid="error-ssh_title">\[Title\]: MaxSize \(255\)/)
    expect(await json(await request(hearth, "GET", "/user/keys", basic(user.name)))).toHaveLength(1)

    // Someone else's key is refused as over the API (403, Forgejo's answer); one's own goes.
    const forged = await other.client.submit(
      "/user/settings/keys",
      { type: "ssh", id: String(api[0]!.id) },
      "/user/settings/keys/delete"
    )
    expect(forged.status).toBe(403)
    expect(forged.text).toContain("You do not have access to this key")
    expect(await json(await request(hearth, "GET", "/user/keys", basic(user.name)))).toHaveLength(1)
    const deleted = await client.submit(
      "/user/settings/keys",
      { type: "ssh", id: String(api[0]!.id) },
      "/user/settings/keys/delete"
    )
    expect(deleted.status).toBe(303)
    expect(await json(await request(hearth, "GET", "/user/keys", basic(user.name)))).toHaveLength(0)
  })

  it("shows titles from the XSS corpus as text", async () => {
    const { client } = await signedIn()
    for (let i = 0; i < corpus.length; i += 10) {
      const added = await client.submit("/user/settings/keys", {
        type: "ssh",
        ssh_title: corpus[i]!.slice(0, 255),
        ssh_content: keygen().pub
      })
      expect(added.status, corpus[i]).toBe(303)
    }
    const page = await client.get("/user/settings/keys")
    expect(executable(page.text)).toEqual([])
    expect(page.text.match(/data-testid="ssh-key"/g)).toHaveLength(Math.ceil(corpus.length / 10))
    expect(page.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    // A refused form keeps hostile input as text too.
    const refused = await client.submit("/user/settings/keys", {
      type: "ssh",
      ssh_title: corpus[0]!,
      ssh_content: corpus[1]!
    })
    expect(refused.status).toBe(422)
    expect(executable(refused.text)).toEqual([])
  })
})

describe("GPG keys", () => {
  it("adds a key whose identity is an activated address, refuses one that is not, deletes", async () => {
    const { user, client } = await signedIn()
    const generate = async (email: string) => {
      const { privateKey } = await openpgp.generateKey({
        type: "ecc",
        userIDs: [{ name: "t", email }],
        format: "object"
      })
      return { armored: privateKey.toPublic().armor(), keyId: privateKey.getKeyID().toHex().toUpperCase() }
    }
    const mine = await generate(user.email)
    const added = await client.submit("/user/settings/keys", { type: "gpg", gpg_content: mine.armored })
    expect(added.status).toBe(303)
    const listed = await client.get("/user/settings/keys")
    expect(listed.text).toMatch(new RegExp(`data-testid="gpg-key-id">${mine.keyId}<`))
    expect(listed.text).toContain(user.email)

    const stranger = await generate("someone-else@example.com")
    const refused = await client.submit("/user/settings/keys", { type: "gpg", gpg_content: stranger.armored })
    expect(refused.status).toBe(422)
    expect(refused.text).toMatch(/data-testid="error-gpg_content">/)
    expect(refused.text).toContain("-----BEGIN PGP PUBLIC KEY BLOCK-----")
    const garbage = await client.submit("/user/settings/keys", { type: "gpg", gpg_content: "not a key" })
    expect(garbage.text).toMatch(/data-testid="error-gpg_content">failed to parse gpg key/)
    const keys = (await json(await request(hearth, "GET", "/user/gpg_keys", basic(user.name)))) as Array<{ id: number }>
    expect(keys).toHaveLength(1)
    const deleted = await client.submit(
      "/user/settings/keys",
      { type: "gpg", id: String(keys[0]!.id) },
      "/user/settings/keys/delete"
    )
    expect(deleted.status).toBe(303)
    expect(await json(await request(hearth, "GET", "/user/gpg_keys", basic(user.name)))).toHaveLength(0)
  })
})

describe("access tokens", () => {
  it("creates a token with the chosen scopes, shows it once, and it works within them", async () => {
    const { user, client } = await signedIn()
    const page = await client.get("/user/settings/applications")
    const body = new URLSearchParams({ _csrf: csrfOf(page.text), name: "ci" })
    for (const scope of ["", "read:repository", "", "write:user", "", "", "", "", ""]) body.append("scope", scope)
    const created = await client.request("POST", "/user/settings/applications", {
      body: body.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(created.status).toBe(201)
    const token = /data-testid="new-token">([0-9a-f]{40})</.exec(created.text)![1]!
    expect(created.text).toContain("it is shown this once only")
    // The token works, within its scopes.
    expect((await request(hearth, "GET", "/user", `token ${token}`)).status).toBe(200)
    expect((await request(hearth, "GET", "/admin/users", `token ${token}`)).status).toBe(403)
    const listed = (await json(await request(hearth, "GET", `/users/${user.name}/tokens`, basic(user.name)))) as Array<{
      id: number
      name: string
      scopes: Array<string>
    }>
    expect(listed).toEqual([expect.objectContaining({ name: "ci", scopes: ["read:repository", "write:user"] })])
    // Never shown again.
    const later = await client.get("/user/settings/applications")
    expect(later.text).not.toContain(token)
    expect(later.text).toContain(token.slice(-8))
    expect(later.text).toMatch(/data-testid="token-name">ci</)

    // Refusals: no scope, a name in use; what was typed kept.
    const noScope = await client.submit("/user/settings/applications", { name: "empty" })
    expect(noScope.status).toBe(422)
    expect(noScope.text).toMatch(/data-testid="error-scope">Choose at least one scope\./)
    expect(noScope.text).toContain('value="empty"')
    const taken = await client.submit("/user/settings/applications", { name: "ci", scope: "read:user" })
    expect(taken.text).toMatch(/data-testid="error-name">access token name has been used already/)
    expect(taken.text).toMatch(/<option value="read:user" selected>/)
    const bad = await client.submit("/user/settings/applications", { name: "bad", scope: "read:everything" })
    expect(bad.text).toMatch(/data-testid="error-scope">invalid access token scope provided/)
    const publicOnly = await client.submit("/user/settings/applications", { name: "public", scope: "public-only" })
    expect(publicOnly.status).toBe(201)

    // Deleting: the token stops working at once; another account's id is a 404.
    const other = await signedIn()
    expect(
      (
        await other.client.submit(
          "/user/settings/applications",
          { id: String(listed[0]!.id) },
          "/user/settings/applications/delete"
        )
      ).status
    ).toBe(404)
    const deleted = await client.submit(
      "/user/settings/applications",
      { id: String(listed[0]!.id) },
      "/user/settings/applications/delete"
    )
    expect(deleted.status).toBe(303)
    expect((await request(hearth, "GET", "/user", `token ${token}`)).status).toBe(401)
  })
})

describe("OAuth2 applications", () => {
  it("creates an application (the secret shown once), edits it, refuses bad URIs next to the field, deletes it", async () => {
    const { user, client } = await signedIn()
    const created = await client.submit(
      "/user/settings/applications",
      {
        application_name: "my app",
        redirect_uris: "https://app.example/callback\r\ncom.example.app:/cb",
        confidential_client: "on"
      },
      "/user/settings/applications/oauth2"
    )
    expect(created.status).toBe(201)
    const secret = /data-testid="client-secret">(gto_[a-z2-7]+)</.exec(created.text)![1]!
    const clientId = /data-testid="client-id">([0-9a-f-]{36})</.exec(created.text)![1]!
    const apps = (await json(await request(hearth, "GET", "/user/applications/oauth2", basic(user.name)))) as Array<{
      id: number
      name: string
      client_id: string
      redirect_uris: Array<string>
      confidential_client: boolean
    }>
    expect(apps).toEqual([
      expect.objectContaining({
        name: "my app",
        client_id: clientId,
        redirect_uris: ["https://app.example/callback", "com.example.app:/cb"],
        confidential_client: true
      })
    ])
    const edit = await client.get(`/user/settings/applications/oauth2/${apps[0]!.id}`)
    expect(edit.status).toBe(200)
    expect(edit.text).not.toContain(secret)
    expect(edit.text).toContain(">https://app.example/callback\ncom.example.app:/cb</textarea>")

    const bad = await client.post(
      `/user/settings/applications/oauth2/${apps[0]!.id}`,
      { application_name: "renamed", redirect_uris: "https://ok.example/cb\njavascript:alert(1)" },
      csrfOf(edit.text)
    )
    expect(bad.status).toBe(422)
    expect(bad.text).toMatch(/data-testid="error-redirect_uris">\[RedirectURIs\]: invalid redirect URI/)
    expect(bad.text).toContain('value="renamed"')
    const saved = await client.post(
      `/user/settings/applications/oauth2/${apps[0]!.id}`,
      { application_name: "renamed", redirect_uris: "https://ok.example/cb" },
      csrfOf(edit.text)
    )
    expect(saved.status).toBe(303)
    const after = (await json(
      await request(hearth, "GET", `/user/applications/oauth2/${apps[0]!.id}`, basic(user.name))
    )) as {
      name: string
      redirect_uris: Array<string>
      confidential_client: boolean
    }
    expect(after).toMatchObject({
      name: "renamed",
      redirect_uris: ["https://ok.example/cb"],
      confidential_client: false
    })

    const noName = await client.submit(
      "/user/settings/applications",
      { application_name: "", redirect_uris: "https://x.example/" },
      "/user/settings/applications/oauth2"
    )
    expect(noName.text).toMatch(/data-testid="error-application_name">\[Name\]: Required/)
    expect(noName.text).toContain(">https://x.example/</textarea>")

    // Another account sees a 404 for it, may not delete it; the owner deletes it.
    const other = await signedIn()
    expect((await other.client.get(`/user/settings/applications/oauth2/${apps[0]!.id}`)).status).toBe(404)
    const forged = await other.client.submit(
      "/user/settings/applications",
      {},
      `/user/settings/applications/oauth2/${apps[0]!.id}/delete`
    )
    expect(forged.status).toBe(404)
    const deleted = await client.submit(
      "/user/settings/applications",
      {},
      `/user/settings/applications/oauth2/${apps[0]!.id}/delete`
    )
    expect(deleted.status).toBe(303)
    expect(await json(await request(hearth, "GET", "/user/applications/oauth2", basic(user.name)))).toHaveLength(0)
  })

  it("shows application and token names from the XSS corpus as text", async () => {
    const { client } = await signedIn()
    for (let i = 0; i < corpus.length; i += 12) {
      expect(
        (
          await client.submit(
            "/user/settings/applications",
            { application_name: corpus[i]!.slice(0, 255), redirect_uris: "https://e.example/cb" },
            "/user/settings/applications/oauth2"
          )
        ).status
      ).toBe(201)
      expect(
        (await client.submit("/user/settings/applications", { name: corpus[i + 1]!.slice(0, 255), scope: "read:user" }))
          .status
      ).toBe(201)
    }
    const page = await client.get("/user/settings/applications")
    expect(executable(page.text)).toEqual([])
    expect(page.text.match(/data-testid="app-row"/g)).toHaveLength(Math.ceil(corpus.length / 12))
  })
})
