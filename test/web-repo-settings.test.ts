// Issue 17 item 3 (repository settings) over plain HTTP: who may open the settings pages (the 404
// page for an invisible repository, 403 for one seen but not administered, transfer and delete the
// owner's), the options form through ReposService.edit (rename with a redirect, refusals next to
// the field with what was typed kept, units and merge settings), archive/unarchive, transfer and
// delete confirmed by the full name, collaborators (add, change, remove, blocks honoured), deploy
// keys (read-only and writable, refusals, delete), CSRF on every form, and escaping.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const dir = mkdtempSync(join(tmpdir(), "hearth-web-reposettings-"))

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
  return readFileSync(`${file}.pub`, "utf8").trim()
}

const signedIn = async () => {
  const user = await createUser(hearth)
  const client = new WebClient(hearth.base)
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

let r = 0
const makeRepo = async (owner: string, options: { private?: boolean } = {}) => {
  const name = `repo${++r}`
  const res = await request(hearth, "POST", "/user/repos", basic(owner), {
    name,
    auto_init: true,
    private: options.private ?? false
  })
  expect(res.status).toBe(201)
  return name
}

const apiRepo = async (owner: string, name: string, as = owner) =>
  json(await request(hearth, "GET", `/repos/${owner}/${name}`, basic(as)))

const addCollaborator = async (owner: string, repo: string, user: string, permission: string) =>
  expect(
    (await request(hearth, "PUT", `/repos/${owner}/${repo}/collaborators/${user}`, basic(owner), { permission })).status
  ).toBe(204)

describe("access", () => {
  it("admins open the pages; writers and strangers get 403, an invisible repository 404, visitors the login", async () => {
    const { user: owner, client } = await signedIn()
    const pub = await makeRepo(owner.name)
    const priv = await makeRepo(owner.name, { private: true })
    const admin = await signedIn()
    const writer = await signedIn()
    const stranger = await signedIn()
    await addCollaborator(owner.name, pub, admin.user.name, "admin")
    await addCollaborator(owner.name, pub, writer.user.name, "write")
    for (const page of ["settings", "settings/collaboration", "settings/keys"]) {
      const path = `/${owner.name}/${pub}/${page}`
      expect((await client.get(path)).status, path).toBe(200)
      expect((await admin.client.get(path)).status, path).toBe(200)
      expect((await writer.client.get(path)).status, path).toBe(403)
      expect((await stranger.client.get(path)).status, path).toBe(403)
      expect((await stranger.client.get(`/${owner.name}/${priv}/${page}`)).status, path).toBe(404)
      const visitor = await new WebClient(hearth.base).get(path)
      expect(visitor.status).toBe(302)
      expect(visitor.location).toMatch(/^\/user\/login\?redirect_to=/)
    }
    // The Settings tab only for admins.
    expect((await client.get(`/${owner.name}/${pub}`)).text).toContain(`/${owner.name}/${pub}/settings"`)
    expect((await writer.client.get(`/${owner.name}/${pub}`)).text).not.toContain(`/${owner.name}/${pub}/settings"`)
    // A writer's POST changes nothing; an admin (not the owner) may not delete or transfer.
    const csrf = csrfOf((await writer.client.get(`/${owner.name}/${pub}`)).text)
    const refused = await writer.client.post(
      `/${owner.name}/${pub}/settings`,
      { action: "update", repo_name: pub, description: "x" },
      csrf
    )
    expect(refused.status).toBe(403)
    const page = await admin.client.get(`/${owner.name}/${pub}/settings`)
    expect(page.text).not.toContain('data-testid="danger-delete"')
    const del = await admin.client.post(
      `/${owner.name}/${pub}/settings`,
      { action: "delete", delete_confirm: `${owner.name}/${pub}` },
      csrfOf(page.text)
    )
    expect(del.status).toBe(403)
    expect((await apiRepo(owner.name, pub)).description).toBe("")
  })

  it("refuses a POST without the CSRF token and changes nothing", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    for (const [path, fields] of [
      ["settings", { action: "update", repo_name: name, description: "changed" }],
      ["settings", { action: "delete", delete_confirm: `${user.name}/${name}` }],
      ["settings/collaboration", { collaborator: "nobody", mode: "read" }],
      ["settings/keys", { title: "k", content: keygen() }]
    ] as const) {
      const res = await client.post(`/${user.name}/${name}/${path}`, fields, undefined)
      expect(res.status, path).toBe(400)
      expect(res.text).toContain("security token (CSRF)")
    }
    expect((await apiRepo(user.name, name)).description).toBe("")
  })
})

describe("options", () => {
  it("updates description, website and visibility, and renames with a redirect", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const res = await client.submit(`${base}/settings`, {
      action: "update",
      repo_name: `${name}-new`,
      description: "A description",
      website: "https://example.com/x",
      default_branch: "main",
      private: "on"
    })
    expect(res.status).toBe(303)
    expect(res.location).toBe(`/${user.name}/${name}-new/settings?done=updated`)
    const shown = await client.get(res.location!)
    expect(shown.text).toContain("The repository&#39;s settings have been updated.")
    const api = await apiRepo(user.name, `${name}-new`)
    expect(api).toMatchObject({
      name: `${name}-new`,
      description: "A description",
      website: "https://example.com/x",
      private: true
    })
    // The old name leads to the new one, the rest of the URL kept.
    const old = await client.get(`${base}/settings`)
    expect(old.status).toBe(302)
    expect(old.location).toBe(`/${user.name}/${name}-new/settings`)
  })

  it("shows a refusal next to its field and keeps what was typed", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const taken = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const bad = await client.submit(`${base}/settings`, {
      action: "update",
      repo_name: name,
      description: "typed text",
      website: "not a url",
      default_branch: "main"
    })
    expect(bad.status).toBe(422)
    expect(bad.text).toMatch(/data-testid="error-website">\[Website\]: Invalid url: &quot;not a url&quot;/)
    expect(bad.text).toContain('value="not a url"')
    expect(bad.text).toContain(">typed text</textarea>")
    const dup = await client.submit(`${base}/settings`, { action: "update", repo_name: taken, default_branch: "main" })
    expect(dup.status).toBe(422)
    expect(dup.text).toMatch(/data-testid="error-repo_name">The repository with the same name already exists./)
    const branch = await client.submit(`${base}/settings`, {
      action: "update",
      repo_name: name,
      default_branch: "nope"
    })
    expect(branch.text).toMatch(/data-testid="error-default_branch">branch does not exist \[name: nope\]/)
    const reserved = await client.submit(`${base}/settings`, {
      action: "update",
      repo_name: "a b",
      default_branch: "main"
    })
    expect(reserved.text).toMatch(/data-testid="error-repo_name">\[Name\]: must contain only/)
    expect(await apiRepo(user.name, name)).toMatchObject({ name, description: "", website: "" })
  })

  it("switches units and merge settings", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const res = await client.submit(`${base}/settings`, {
      action: "advanced",
      has_wiki: "on",
      has_pull_requests: "on",
      allow_squash_merge: "on",
      default_merge_style: "squash"
    })
    expect(res.status).toBe(303)
    const api = await apiRepo(user.name, name)
    expect(api).toMatchObject({
      has_issues: false,
      has_wiki: true,
      has_pull_requests: true,
      allow_merge_commits: false,
      allow_squash_merge: true,
      default_merge_style: "squash"
    })
    // The tab follows the unit.
    expect((await client.get(base)).text).not.toContain(`${base}/issues"`)
    const bad = await client.submit(`${base}/settings`, {
      action: "advanced",
      has_issues: "on",
      default_merge_style: "octopus"
    })
    expect(bad.status).toBe(422)
    expect(bad.text).toMatch(/data-testid="error-default_merge_style">\[DefaultMergeStyle\]: must be one of/)
    // The boxes as they were sent.
    expect(bad.text).toMatch(/id="field-has_issues" name="has_issues" value="on" checked/)
    expect((await apiRepo(user.name, name)).has_issues).toBe(false)
  })

  it("shows names and descriptions from the XSS corpus as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    for (let i = 0; i < corpus.length; i += 7) {
      const res = await client.submit(`${base}/settings`, {
        action: "update",
        repo_name: name,
        description: corpus[i]!.slice(0, 2048),
        default_branch: "main"
      })
      expect(res.status, corpus[i]).toBe(303)
      const page = await client.get(`${base}/settings`)
      expect(executable(page.text), corpus[i]).toEqual([])
    }
    // A refused form echoes what was typed, escaped.
    const bad = await client.submit(`${base}/settings`, {
      action: "update",
      repo_name: corpus[0]!,
      website: corpus[2]!
    })
    expect(bad.status).toBe(422)
    expect(executable(bad.text)).toEqual([])
  })
})

describe("danger zone", () => {
  it("archives and unarchives after the full name is typed", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const wrong = await client.submit(`${base}/settings`, { action: "archive", archive_confirm: name })
    expect(wrong.status).toBe(422)
    expect(wrong.text).toMatch(/data-testid="error-archive_confirm">Type the repository&#39;s full name/)
    expect((await apiRepo(user.name, name)).archived).toBe(false)
    const done = await client.submit(`${base}/settings`, { action: "archive", archive_confirm: `${user.name}/${name}` })
    expect(done.status).toBe(303)
    expect(done.location).toBe(`${base}/settings?done=archived`)
    expect((await apiRepo(user.name, name)).archived).toBe(true)
    const page = await client.get(`${base}/settings`)
    expect(page.text).toContain('data-testid="danger-unarchive"')
    const back = await client.submit(`${base}/settings`, {
      action: "unarchive",
      unarchive_confirm: `${user.name}/${name}`
    })
    expect(back.status).toBe(303)
    expect((await apiRepo(user.name, name)).archived).toBe(false)
  })

  it("transfers to an organization at once and to another user pending acceptance", async () => {
    const { user, client } = await signedIn()
    const org = `org${Date.now().toString(36)}`
    expect((await request(hearth, "POST", "/orgs", basic(user.name), { username: org })).status).toBe(201)
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const missing = await client.submit(`${base}/settings`, {
      action: "transfer",
      new_owner_name: "nobody-here",
      transfer_confirm: `${user.name}/${name}`
    })
    expect(missing.status).toBe(422)
    expect(missing.text).toMatch(
      /data-testid="error-new_owner_name">There is no user or organization named nobody-here./
    )
    const unconfirmed = await client.submit(`${base}/settings`, {
      action: "transfer",
      new_owner_name: org,
      transfer_confirm: ""
    })
    expect(unconfirmed.text).toContain('data-testid="error-transfer_confirm"')
    const moved = await client.submit(`${base}/settings`, {
      action: "transfer",
      new_owner_name: org,
      transfer_confirm: `${user.name}/${name}`
    })
    expect(moved.status).toBe(303)
    expect(moved.location).toBe(`/${org}/${name}`)
    expect((await apiRepo(org, name, user.name)).owner.login).toBe(org)

    const other = await createUser(hearth)
    const second = await makeRepo(user.name)
    const pending = await client.submit(`/${user.name}/${second}/settings`, {
      action: "transfer",
      new_owner_name: other.name,
      transfer_confirm: `${user.name}/${second}`
    })
    expect(pending.status).toBe(303)
    expect(pending.location).toBe(`/${user.name}/${second}/settings?done=transfer-pending`)
    const shown = await client.get(pending.location!)
    expect(shown.text).toContain(`A transfer to <strong>${other.name}</strong> is waiting for its recipient.`)
    expect((await apiRepo(user.name, second)).owner.login).toBe(user.name)
  })

  it("deletes only after the full name is typed", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}`
    const wrong = await client.submit(`${base}/settings`, { action: "delete", delete_confirm: "someone/else" })
    expect(wrong.status).toBe(422)
    expect(wrong.text).toContain('data-testid="error-delete_confirm"')
    expect((await request(hearth, "GET", `/repos/${user.name}/${name}`, basic(user.name))).status).toBe(200)
    const done = await client.submit(`${base}/settings`, { action: "delete", delete_confirm: `${user.name}/${name}` })
    expect(done.status).toBe(303)
    expect(done.location).toBe(`/${user.name}`)
    expect((await request(hearth, "GET", `/repos/${user.name}/${name}`, basic(user.name))).status).toBe(404)
  })
})

describe("collaborators", () => {
  it("adds with a permission, changes it, refuses bad input and blocks, removes", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/collaboration`
    const friend = await createUser(hearth)
    expect((await client.get(base)).text).toContain("This repository has no collaborators.")
    const added = await client.submit(base, { collaborator: friend.name, mode: "read" })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${base}?done=collaborator-added`)
    const permission = async () =>
      (
        await json(
          await request(
            hearth,
            "GET",
            `/repos/${user.name}/${name}/collaborators/${friend.name}/permission`,
            basic(user.name)
          )
        )
      ).permission
    expect(await permission()).toBe("read")
    const listed = await client.get(added.location!)
    expect(listed.text).toMatch(new RegExp(`data-testid="collaborator-name">${friend.name}<`))

    const changed = await client.post(
      `${base}/access_mode`,
      { uid: String(friend.id), mode: "admin" },
      csrfOf(listed.text)
    )
    expect(changed.status).toBe(303)
    expect(await permission()).toBe("admin")

    const unknown = await client.submit(base, { collaborator: "no-such-user", mode: "write" })
    expect(unknown.status).toBe(422)
    expect(unknown.text).toMatch(/data-testid="error-collaborator">There is no user named no-such-user./)
    expect(unknown.text).toContain('value="no-such-user"')
    const self = await client.submit(base, { collaborator: user.name, mode: "write" })
    expect(self.text).toMatch(/data-testid="error-collaborator">the repository owner cannot be a collaborator/)
    const mode = await client.submit(base, { collaborator: friend.name, mode: "owner" })
    expect(mode.text).toMatch(/data-testid="error-mode">\[Permission\]: must be one of read, write, admin/)

    const blocked = await createUser(hearth)
    expect((await request(hearth, "PUT", `/user/block/${user.name}`, basic(blocked.name))).status).toBe(204)
    const refused = await client.submit(base, { collaborator: blocked.name, mode: "write" })
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-collaborator"')
    expect(
      (await request(hearth, "GET", `/repos/${user.name}/${name}/collaborators/${blocked.name}`, basic(user.name)))
        .status
    ).toBe(404)

    const removed = await client.submit(base, { id: String(friend.id) }, `${base}/delete`)
    expect(removed.status).toBe(303)
    expect(
      (await request(hearth, "GET", `/repos/${user.name}/${name}/collaborators/${friend.name}`, basic(user.name)))
        .status
    ).toBe(404)
  })

  it("shows collaborator names as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/collaboration`
    const typed = await client.submit(base, { collaborator: corpus[0]!, mode: corpus[1]! })
    expect(typed.status).toBe(422)
    expect(executable(typed.text)).toEqual([])
  })
})

describe("deploy keys", () => {
  it("adds read-only and writable keys, refuses bad input next to the field, deletes", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/keys`
    expect((await client.get(base)).text).toContain("This repository has no deploy keys.")
    const ro = await client.submit(base, { title: "ci", content: keygen() })
    expect(ro.status).toBe(303)
    expect(ro.location).toBe(`${base}?done=key-added`)
    const rw = await client.submit(base, { title: "deployer", content: keygen(), is_writable: "on" })
    expect(rw.status).toBe(303)
    const api = (await json(
      await request(hearth, "GET", `/repos/${user.name}/${name}/keys`, basic(user.name))
    )) as Array<{
      id: number
      title: string
      read_only: boolean
    }>
    expect(api.map((k) => [k.title, k.read_only]).sort()).toEqual([
      ["ci", true],
      ["deployer", false]
    ])
    const listed = await client.get(base)
    expect(listed.text).toMatch(/data-testid="deploy-key-title">ci</)
    expect(listed.text).toContain("Read and write")

    const dup = await client.submit(base, { title: "ci", content: keygen() })
    expect(dup.status).toBe(422)
    expect(dup.text).toMatch(/data-testid="error-title">A key with the same name already exists/)
    const junk = await client.submit(base, { title: "junk", content: "not a key", is_writable: "on" })
    expect(junk.status).toBe(422)
    expect(junk.text).toContain('data-testid="error-content"')
    expect(junk.text).toContain(">not a key</textarea>")
    expect(junk.text).toMatch(/id="field-is_writable" name="is_writable" value="on" checked/)

    const ci = api.find((k) => k.title === "ci")!
    const deleted = await client.submit(base, { id: String(ci.id) }, `${base}/delete`)
    expect(deleted.status).toBe(303)
    const after = (await json(
      await request(hearth, "GET", `/repos/${user.name}/${name}/keys`, basic(user.name))
    )) as Array<{
      title: string
    }>
    expect(after.map((k) => k.title)).toEqual(["deployer"])
    // Another repository's key id is a 404 page here.
    const otherRepo = await makeRepo(user.name)
    const page = await client.get(`/${user.name}/${otherRepo}/settings/keys`)
    const foreign = await client.post(
      `/${user.name}/${otherRepo}/settings/keys/delete`,
      { id: String(api.find((k) => k.title === "deployer")!.id) },
      csrfOf(page.text)
    )
    expect(foreign.status).toBe(404)
  })

  it("shows key titles from the XSS corpus as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/keys`
    for (let i = 0; i < corpus.length; i += 15) {
      const res = await client.submit(base, { title: corpus[i]!.slice(0, 50), content: keygen() })
      expect([303, 422], corpus[i]).toContain(res.status)
    }
    expect(executable((await client.get(base)).text)).toEqual([])
  })
})
