// Issue 17 item 3 (branch and tag protection settings pages) over plain HTTP: who may open them
// (404 page for an invisible repository, 403 for one seen but not administered), every option of a
// branch rule saved through the form and read back through the API, refusals next to their field
// with what was typed kept (unknown whitelist users and teams, approvals, duplicates), users without
// access dropped and named, recent status contexts, archived repositories refused, deletion, tag
// rules, CSRF on every form, and escaping of rule names and patterns.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth()
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

const signedIn = async () => {
  const user = await createUser(hearth)
  const client = new WebClient(hearth.base)
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

let r = 0
const makeRepo = async (owner: string, options: { private?: boolean; org?: string; as?: string } = {}) => {
  const name = `repo${++r}`
  const path = options.org === undefined ? "/user/repos" : `/orgs/${options.org}/repos`
  const res = await request(hearth, "POST", path, basic(options.as ?? owner), {
    name,
    auto_init: true,
    private: options.private ?? false
  })
  expect(res.status).toBe(201)
  return name
}

const api = (method: string, path: string, as: string, body?: unknown) => request(hearth, method, path, basic(as), body)

const addCollaborator = async (owner: string, repo: string, user: string, permission: string) =>
  expect((await api("PUT", `/repos/${owner}/${repo}/collaborators/${user}`, owner, { permission })).status).toBe(204)

const apiRule = async (owner: string, repo: string, name: string, as = owner) => {
  const res = await api("GET", `/repos/${owner}/${repo}/branch_protections/${encodeURIComponent(name)}`, as)
  return res.status === 200 ? await json(res) : res.status
}

describe("access", () => {
  it("admins open the pages; writers and strangers get 403, an invisible repository 404, visitors the login", async () => {
    const { user: owner, client } = await signedIn()
    const pub = await makeRepo(owner.name)
    const priv = await makeRepo(owner.name, { private: true })
    const writer = await signedIn()
    const stranger = await signedIn()
    await addCollaborator(owner.name, pub, writer.user.name, "write")
    for (const page of ["settings/branches", "settings/branches/edit", "settings/tags"]) {
      const path = `/${owner.name}/${pub}/${page}`
      expect((await client.get(path)).status, path).toBe(200)
      expect((await writer.client.get(path)).status, path).toBe(403)
      expect((await stranger.client.get(path)).status, path).toBe(403)
      expect((await stranger.client.get(`/${owner.name}/${priv}/${page}`)).status, path).toBe(404)
      const visitor = await new WebClient(hearth.base).get(path)
      expect(visitor.status).toBe(302)
      expect(visitor.location).toMatch(/^\/user\/login\?redirect_to=/)
    }
    // The menu has the entries.
    const page = await client.get(`/${owner.name}/${pub}/settings`)
    expect(page.text).toContain(`href="/${owner.name}/${pub}/settings/branches"`)
    expect(page.text).toContain(`href="/${owner.name}/${pub}/settings/tags"`)
    // A writer's POST is refused and creates nothing.
    const csrf = csrfOf((await writer.client.get(`/${owner.name}/${pub}`)).text)
    for (const [path, fields] of [
      ["settings/branches/edit", { rule_name: "main", enable_push: "none" }],
      ["settings/tags", { name_pattern: "v*" }]
    ] as const) {
      expect((await writer.client.post(`/${owner.name}/${pub}/${path}`, fields, csrf)).status).toBe(403)
    }
    expect(await apiRule(owner.name, pub, "main")).toBe(404)
    expect(await json(await api("GET", `/repos/${owner.name}/${pub}/tag_protections`, owner.name))).toEqual([])
    // An unknown rule is the 404 page.
    expect((await client.get(`/${owner.name}/${pub}/settings/branches/edit?rule_name=nope`)).status).toBe(404)
    expect((await client.get(`/${owner.name}/${pub}/settings/tags?id=999999`)).status).toBe(404)
  })

  it("refuses a POST without the CSRF token and changes nothing", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    for (const [path, fields] of [
      ["settings/branches/edit", { rule_name: "main", enable_push: "none" }],
      ["settings/branches/delete", { rule_name: "main" }],
      ["settings/tags", { name_pattern: "v*" }],
      ["settings/tags/delete", { id: "1" }]
    ] as const) {
      const res = await client.post(`/${user.name}/${name}/${path}`, fields, undefined)
      expect(res.status, path).toBe(400)
      expect(res.text).toContain("security token (CSRF)")
    }
    expect(await apiRule(user.name, name, "main")).toBe(404)
  })
})

describe("branch rules", () => {
  it("saves every option, lists the rule, edits it and deletes it after the confirmation", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const friend = await createUser(hearth)
    await addCollaborator(user.name, name, friend.name, "write")
    const base = `/${user.name}/${name}/settings/branches`
    expect((await client.get(base)).text).toContain("No branch is protected.")
    expect((await client.get(base)).text).toMatch(
      /data-testid="default-branch-note">The default branch is <code>main<\/code>/
    )
    const saved = await client.submit(`${base}/edit`, {
      rule_name: "main",
      enable_push: "whitelist",
      whitelist_users: `${friend.name}, ${user.name}`,
      whitelist_deploy_keys: "on",
      require_signed_commits: "on",
      protected_file_patterns: "docs/*.md",
      unprotected_file_patterns: "*.txt",
      enable_merge_whitelist: "on",
      merge_whitelist_users: friend.name,
      enable_status_check: "on",
      status_check_contexts: "ci/build\nlint/*",
      required_approvals: "2",
      enable_approvals_whitelist: "on",
      approvals_whitelist_users: user.name,
      block_on_rejected_reviews: "on",
      block_on_official_review_requests: "on",
      block_on_outdated_branch: "on",
      dismiss_stale_approvals: "on",
      ignore_stale_approvals: "on",
      apply_to_admins: "on"
    })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe(`${base}?done=rule-saved`)
    expect(await apiRule(user.name, name, "main")).toMatchObject({
      rule_name: "main",
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [friend.name, user.name],
      push_whitelist_deploy_keys: true,
      require_signed_commits: true,
      protected_file_patterns: "docs/*.md",
      unprotected_file_patterns: "*.txt",
      enable_merge_whitelist: true,
      merge_whitelist_usernames: [friend.name],
      enable_status_check: true,
      status_check_contexts: ["ci/build", "lint/*"],
      required_approvals: 2,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: [user.name],
      block_on_rejected_reviews: true,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      dismiss_stale_approvals: true,
      ignore_stale_approvals: true,
      apply_to_admins: true
    })
    const listed = await client.get(saved.location!)
    expect(listed.text).toContain("The branch protection rule has been saved.")
    expect(listed.text).toMatch(/data-testid="branch-rule-name">main</)
    // The edit form shows the rule as it is.
    const edit = await client.get(`${base}/edit?rule_name=main`)
    expect(edit.status).toBe(200)
    expect(edit.text).toMatch(/id="field-enable_push-whitelist" name="enable_push" value="whitelist" checked/)
    expect(edit.text).toContain(`value="${friend.name}"`)
    expect(edit.text).toContain(">ci/build\nlint/*</textarea>")
    expect(edit.text).toMatch(/id="field-apply_to_admins" name="apply_to_admins" value="on" checked/)

    // Edit: everyone with write access may push, fewer options; the whitelists are cleared.
    const edited = await client.submit(
      `${base}/edit?rule_name=main`,
      {
        original_rule_name: "main",
        enable_push: "all",
        whitelist_users: friend.name,
        required_approvals: "0",
        block_on_outdated_branch: "on"
      },
      `${base}/edit`
    )
    expect(edited.status).toBe(303)
    expect(await apiRule(user.name, name, "main")).toMatchObject({
      enable_push: true,
      enable_push_whitelist: false,
      push_whitelist_usernames: [],
      push_whitelist_deploy_keys: false,
      require_signed_commits: false,
      enable_merge_whitelist: false,
      merge_whitelist_usernames: [],
      enable_status_check: false,
      status_check_contexts: [],
      required_approvals: 0,
      block_on_outdated_branch: true,
      block_on_rejected_reviews: false,
      apply_to_admins: false
    })

    // A second rule, a pattern: listed after the name.
    expect((await client.submit(`${base}/edit`, { rule_name: "release/*", enable_push: "none" })).status).toBe(303)
    const both = await client.get(base)
    expect([...both.text.matchAll(/data-testid="branch-rule-name">([^<]*)</g)].map((m) => m[1])).toEqual([
      "main",
      "release/*"
    ])

    // Delete: the button is behind a disclosure; the form deletes.
    expect(both.text).toContain('data-testid="delete-rule"')
    const deleted = await client.post(`${base}/delete`, { rule_name: "release/*" }, csrfOf(both.text))
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe(`${base}?done=rule-deleted`)
    expect(await apiRule(user.name, name, "release/*")).toBe(404)
    expect((await client.post(`${base}/delete`, { rule_name: "release/*" }, csrfOf(both.text))).status).toBe(404)
  })

  it("moves pattern rules up and down; a rule for a name stays first", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/branches`
    for (const rule of ["main", "release/*", "feature/*", "**"])
      expect((await client.submit(`${base}/edit`, { rule_name: rule, enable_push: "all" })).status).toBe(303)
    const order = async () =>
      (
        (await json(await api("GET", `/repos/${user.name}/${name}/branch_protections`, user.name))) as Array<{
          rule_name: string
        }>
      ).map((r) => r.rule_name)
    expect(await order()).toEqual(["main", "release/*", "feature/*", "**"])
    const page = await client.get(base)
    expect(page.text).not.toContain('aria-label="Move the rule main up"')
    expect(page.text).not.toContain('aria-label="Move the rule release/* up"')
    expect(page.text).toContain('aria-label="Move the rule ** up"')
    expect(page.text).not.toContain('aria-label="Move the rule ** down"')
    const moved = await client.post(`${base}/priority`, { rule_name: "**", direction: "up" }, csrfOf(page.text))
    expect(moved.status).toBe(303)
    expect(moved.location).toBe(`${base}?done=rule-moved`)
    expect(await order()).toEqual(["main", "release/*", "**", "feature/*"])
    await client.post(`${base}/priority`, { rule_name: "release/*", direction: "down" }, csrfOf(page.text))
    expect(await order()).toEqual(["main", "**", "release/*", "feature/*"])
    // A pattern never goes above a name.
    await client.post(`${base}/priority`, { rule_name: "**", direction: "up" }, csrfOf(page.text))
    expect(await order()).toEqual(["main", "**", "release/*", "feature/*"])
    expect(
      (await client.post(`${base}/priority`, { rule_name: "nope", direction: "up" }, csrfOf(page.text))).status
    ).toBe(404)
  })

  it("shows refusals next to their field, keeps what was typed, and names whom it dropped", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/branches`
    const reader = await createUser(hearth)
    await addCollaborator(user.name, name, reader.name, "read")

    const noName = await client.submit(`${base}/edit`, { rule_name: " ", enable_push: "all" })
    expect(noName.status).toBe(422)
    expect(noName.text).toMatch(/data-testid="error-rule_name">Enter the branch name or pattern/)

    const unknown = await client.submit(`${base}/edit`, {
      rule_name: "main",
      enable_push: "all",
      enable_merge_whitelist: "on",
      merge_whitelist_users: "nobody-at-all",
      protected_file_patterns: "typed;kept",
      block_on_rejected_reviews: "on"
    })
    expect(unknown.status).toBe(422)
    expect(unknown.text).toMatch(/data-testid="error-merge_whitelist_users">There is no user named nobody-at-all./)
    expect(unknown.text).toContain('value="nobody-at-all"')
    expect(unknown.text).toContain('value="typed;kept"')
    expect(unknown.text).toMatch(/id="field-enable_push-all" name="enable_push" value="all" checked/)
    expect(unknown.text).toMatch(
      /id="field-block_on_rejected_reviews" name="block_on_rejected_reviews" value="on" checked/
    )
    expect(unknown.text).toContain('value="main"')

    const approvals = await client.submit(`${base}/edit`, { rule_name: "main", required_approvals: "two" })
    expect(approvals.status).toBe(422)
    expect(approvals.text).toMatch(/data-testid="error-required_approvals">Enter a whole number/)
    expect(approvals.text).toContain('value="two"')
    expect(await apiRule(user.name, name, "main")).toBe(404)

    // A reader may not be whitelisted for pushing: dropped, and the page says so.
    const dropped = await client.submit(`${base}/edit`, {
      rule_name: "main",
      enable_push: "whitelist",
      whitelist_users: `${user.name} ${reader.name}`
    })
    expect(dropped.status).toBe(303)
    expect((await apiRule(user.name, name, "main")).push_whitelist_usernames).toEqual([user.name])
    const notice = await client.get(dropped.location!)
    expect(notice.text).toMatch(new RegExp(`data-testid="form-dropped">[^<]*${reader.name}`))

    const duplicate = await client.submit(`${base}/edit`, { rule_name: "main", enable_push: "all" })
    expect(duplicate.status).toBe(422)
    expect(duplicate.text).toMatch(/data-testid="error-rule_name">A rule for main exists already/)
  })

  it("lists the status contexts posted in the last week and marks the required ones", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/branches`
    expect((await client.get(`${base}/edit`)).text).toContain("No status has been posted to this repository")
    const branch = await json(await api("GET", `/repos/${user.name}/${name}/branches/main`, user.name))
    for (const context of ["ci/build", "lint"]) {
      const res = await api("POST", `/repos/${user.name}/${name}/statuses/${branch.commit.id}`, user.name, {
        state: "success",
        context
      })
      expect(res.status).toBe(201)
    }
    expect(
      (
        await client.submit(`${base}/edit`, {
          rule_name: "main",
          enable_status_check: "on",
          status_check_contexts: "ci/*"
        })
      ).status
    ).toBe(303)
    const page = await client.get(`${base}/edit?rule_name=main`)
    expect(page.text).toMatch(/<code>ci\/build<\/code> <span class="Label Label--success ml-1">required/)
    expect(page.text).toMatch(/<code>lint<\/code> <span class="Label ml-1">not required/)
  })

  it("offers team whitelists in an organization's repository and refuses unknown teams", async () => {
    const { user, client } = await signedIn()
    const org = `org${++r}`
    expect((await api("POST", "/orgs", user.name, { username: org })).status).toBe(201)
    const team = await json(
      await api("POST", `/orgs/${org}/teams`, user.name, {
        name: "pushers",
        permission: "write",
        includes_all_repositories: true,
        units: ["repo.code"]
      })
    )
    expect(team.id).toBeGreaterThan(0)
    const name = await makeRepo(user.name, { org })
    const base = `/${org}/${name}/settings/branches`
    const form = await client.get(`${base}/edit`)
    expect(form.text).toContain('name="whitelist_teams"')
    const bad = await client.submit(`${base}/edit`, {
      rule_name: "main",
      enable_push: "whitelist",
      whitelist_teams: "ghosts"
    })
    expect(bad.status).toBe(422)
    expect(bad.text).toMatch(new RegExp(`data-testid="error-whitelist_teams">${org} has no team named ghosts.`))
    const good = await client.submit(`${base}/edit`, {
      rule_name: "main",
      enable_push: "whitelist",
      whitelist_teams: "pushers"
    })
    expect(good.status).toBe(303)
    expect(
      ((await apiRule(org, name, "main", user.name)) as { push_whitelist_teams: Array<string> }).push_whitelist_teams
    ).toEqual(["pushers"])
    // A user's repository has no team fields.
    const own = await makeRepo(user.name)
    expect((await client.get(`/${user.name}/${own}/settings/branches/edit`)).text).not.toContain(
      'name="whitelist_teams"'
    )
  })

  it("refuses new and edited rules in an archived repository (423) and still deletes", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/branches`
    expect((await client.submit(`${base}/edit`, { rule_name: "main", enable_push: "all" })).status).toBe(303)
    expect((await api("PATCH", `/repos/${user.name}/${name}`, user.name, { archived: true })).status).toBe(200)
    const refused = await client.submit(`${base}/edit`, { rule_name: "dev", enable_push: "all" })
    expect(refused.status).toBe(423)
    expect(refused.text).toContain("This repository is archived")
    const edit = await client.submit(
      `${base}/edit?rule_name=main`,
      { original_rule_name: "main", enable_push: "none" },
      `${base}/edit`
    )
    expect(edit.status).toBe(423)
    expect(await apiRule(user.name, name, "dev")).toBe(404)
    expect((await apiRule(user.name, name, "main")).enable_push).toBe(true)
    const deleted = await client.submit(base, { rule_name: "main" }, `${base}/delete`)
    expect(deleted.status).toBe(303)
    expect(await apiRule(user.name, name, "main")).toBe(404)
  })

  it("shows rule names from the XSS corpus as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/branches`
    for (let i = 0; i < corpus.length; i += 9) {
      const res = await client.submit(`${base}/edit`, { rule_name: corpus[i]!.slice(0, 255), enable_push: "all" })
      expect([303, 422], corpus[i]).toContain(res.status)
      if (res.status === 422) expect(executable(res.text), corpus[i]).toEqual([])
    }
    const list = await client.get(base)
    expect(list.text.match(/data-testid="branch-rule"/g)?.length ?? 0).toBeGreaterThan(3)
    expect(executable(list.text)).toEqual([])
    const rules = (await json(await api("GET", `/repos/${user.name}/${name}/branch_protections`, user.name))) as Array<{
      rule_name: string
    }>
    for (const rule of rules.slice(0, 5)) {
      const page = await client.get(`${base}/edit?rule_name=${encodeURIComponent(rule.rule_name)}`)
      expect(page.status, rule.rule_name).toBe(200)
      expect(executable(page.text), rule.rule_name).toEqual([])
    }
    // Typed and refused: escaped too.
    const bad = await client.submit(`${base}/edit`, {
      rule_name: corpus[0]!,
      enable_merge_whitelist: "on",
      merge_whitelist_users: corpus[1]!,
      required_approvals: corpus[2]!
    })
    expect(bad.status).toBe(422)
    expect(executable(bad.text)).toEqual([])
  })
})

describe("tag rules", () => {
  it("adds, refuses bad input next to the field, edits and deletes", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const friend = await createUser(hearth)
    await addCollaborator(user.name, name, friend.name, "read")
    const base = `/${user.name}/${name}/settings/tags`
    expect((await client.get(base)).text).toContain("No tag is protected.")
    const added = await client.submit(base, { name_pattern: "v*", allowlist_users: user.name })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${base}?done=tag-saved`)
    const rules = await json(await api("GET", `/repos/${user.name}/${name}/tag_protections`, user.name))
    expect(rules).toMatchObject([{ name_pattern: "v*", whitelist_usernames: [user.name] }])
    const id = rules[0].id as number
    const listed = await client.get(added.location!)
    expect(listed.text).toMatch(/data-testid="tag-rule-pattern">v\*</)

    const invalid = await client.submit(base, { name_pattern: "/[/", allowlist_users: "kept" })
    expect(invalid.status).toBe(422)
    expect(invalid.text).toMatch(/data-testid="error-name_pattern">This is neither a valid glob/)
    expect(invalid.text).toContain('value="kept"')
    const unknown = await client.submit(base, { name_pattern: "x*", allowlist_users: "nobody-here" })
    expect(unknown.text).toMatch(/data-testid="error-allowlist_users">There is no user named nobody-here./)
    const duplicate = await client.submit(base, { name_pattern: "v*" })
    expect(duplicate.text).toMatch(/data-testid="error-name_pattern">A rule for v\* exists already/)

    const editing = await client.get(`${base}?id=${id}`)
    expect(editing.text).toContain(`name="id" value="${id}"`)
    const edited = await client.post(
      base,
      { id: String(id), name_pattern: "/^v[0-9]+$/", allowlist_users: friend.name },
      csrfOf(editing.text)
    )
    expect(edited.status).toBe(303)
    expect(await json(await api("GET", `/repos/${user.name}/${name}/tag_protections/${id}`, user.name))).toMatchObject({
      name_pattern: "/^v[0-9]+$/",
      whitelist_usernames: [friend.name]
    })

    const deleted = await client.submit(base, { id: String(id) }, `${base}/delete`)
    expect(deleted.status).toBe(303)
    expect((await api("GET", `/repos/${user.name}/${name}/tag_protections/${id}`, user.name)).status).toBe(404)
  })

  it("shows tag patterns from the XSS corpus as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/tags`
    for (let i = 0; i < corpus.length; i += 11) {
      const res = await client.submit(base, { name_pattern: corpus[i]!, allowlist_users: corpus[i + 1] ?? "" })
      expect([303, 422], corpus[i]).toContain(res.status)
      if (res.status === 422) expect(executable(res.text), corpus[i]).toEqual([])
    }
    expect(executable((await client.get(base)).text)).toEqual([])
  })
})
