// A real client over the routes the other SDK tests do not call: gitea-js 1.23 (npm) against the
// administration, organizations and teams, instance settings, templates, git data and repository
// helpers — each call as an administrator's script or a CI job would make it, each answer read
// through the SDK's own types. gitea-js throws the response of any non-2xx answer, so every call
// below that returns is a 2xx; the assertions check what came back.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { giteaApi } from "gitea-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { keygen } from "./support/ssh.ts"

let hearth: Hearth
let root: ReturnType<typeof giteaApi>
let alice: ReturnType<typeof giteaApi>
let bob: ReturnType<typeof giteaApi>
let head = ""
let tagSha = ""
const work = mkdtempSync(join(tmpdir(), "hearth-sdk-sweep-"))

/** The status of what gitea-js threw (it throws the Response-like object of a non-2xx answer). */
const statusOf = (promise: Promise<{ status: number }>) =>
  promise.then(
    (r) => r.status,
    (e: { status: number }) => e.status
  )

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "root", isAdmin: true })
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  root = giteaApi(hearth.base, { token: await createToken(hearth, "root") })
  alice = giteaApi(hearth.base, { token: await createToken(hearth, "alice") })
  bob = giteaApi(hearth.base, { token: await createToken(hearth, "bob") })
  const created = await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })
  expect(created.status).toBe(201)
  // A commit with an .editorconfig and an annotated tag, pushed with real git.
  const clone = join(work, "app")
  const url = `${hearth.base.replace("://", "://alice:password123@")}/alice/app.git`
  // Asynchronous: the server answering the clone runs in this process.
  await gitIn(work, ["clone", "-q", url, clone])
  const git = (...args: Array<string>) => gitIn(clone, args)
  writeFileSync(join(clone, ".editorconfig"), "root = true\n\n[*.ts]\nindent_style = space\nindent_size = 2\n")
  await git("add", ".editorconfig")
  await git("commit", "-q", "-m", "editorconfig")
  await git("tag", "-a", "v1.0", "-m", "the first release")
  await git("push", "-q", "origin", "HEAD", "v1.0")
  head = (await git("rev-parse", "HEAD")).trim()
  tagSha = (await git("rev-parse", "v1.0")).trim()
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("gitea-js: the instance", () => {
  it("reads the version, NodeInfo and the settings an API client checks first", async () => {
    expect((await alice.version.getVersion()).data.version).toMatch(/\d/)
    expect((await alice.nodeinfo.getNodeInfo()).data.software?.name).toBe("hearth")
    const ui = (await alice.settings.getGeneralUiSettings()).data
    expect(ui.allowed_reactions?.length).toBeGreaterThan(0)
    expect(typeof (await alice.settings.getGeneralAttachmentSettings()).data.enabled).toBe("boolean")
    expect(typeof (await alice.settings.getGeneralRepositorySettings()).data.mirrors_disabled).toBe("boolean")
    expect((await alice.settings.getGeneralApiSettings()).data.max_response_items).toBeGreaterThan(0)
  })

  it("lists and reads the templates a new repository may start from", async () => {
    const labels = (await alice.label.listLabelTemplates()).data
    expect(labels.length).toBeGreaterThan(0)
    expect((await alice.label.getLabelTemplateInfo(labels[0]!)).data.length).toBeGreaterThan(0)
    const licenses = (await alice.licenses.listLicenseTemplates()).data
    const mit = licenses.find((l) => l.key === "MIT")
    expect(mit).toBeDefined()
    expect((await alice.licenses.getLicenseTemplateInfo("MIT")).data.body).toContain("Permission is hereby granted")
    const gitignores = (await alice.gitignore.listGitignoresTemplates()).data
    expect(gitignores).toContain("Node")
    expect((await alice.gitignore.getGitignoreTemplateInfo("Node")).data.source).toContain("node_modules")
  })

  it("renders markdown and markup", async () => {
    expect(
      (await alice.markdown.renderMarkdown({ Text: "**hi**", Mode: "markdown" }, { format: "text" })).data
    ).toContain("<strong>hi</strong>")
    expect(
      (await alice.markup.renderMarkup({ Text: "# Title", Mode: "file", FilePath: "README.md" }, { format: "text" }))
        .data
    ).toContain("Title</h1>")
  })
})

describe("gitea-js: administration", () => {
  it("creates an organization and a repository for a user, lists e-mails, organizations and cron tasks", async () => {
    const org = (await root.admin.adminCreateOrg("bob", { username: "bobs-org" })).data
    expect(org.name).toBe("bobs-org")
    const repo = (await root.admin.adminCreateRepo("bob", { name: "made-for-bob" })).data
    expect(repo.full_name).toBe("bob/made-for-bob")
    const emails = (await root.admin.adminGetAllEmails()).data
    expect(emails.map((e) => e.email)).toContain("alice@example.com")
    expect((await root.admin.adminSearchEmails({ q: "alice" })).data.map((e) => e.username)).toEqual(["alice"])
    expect((await root.admin.adminGetAllOrgs()).data.map((o) => o.name)).toContain("bobs-org")
    const tasks = (await root.admin.adminCronList()).data
    expect(tasks.length).toBeGreaterThan(0)
    expect(await statusOf(root.admin.adminCronRun(tasks[0]!.name!))).toBe(204)
    expect((await root.admin.adminUnadoptedList()).data).toEqual([])
    // Not an administrator: refused.
    expect(await statusOf(alice.admin.adminCronList())).toBe(403)
  })

  it("adds and removes a user's public key", async () => {
    const added = (await root.admin.adminCreatePublicKey("bob", { title: "laptop", key: keygen(work).pub })).data
    expect(added.title).toBe("laptop")
    expect(await statusOf(root.admin.adminDeleteUserPublicKey("bob", added.id!))).toBe(204)
  })
})

describe("gitea-js: organizations and teams", () => {
  let teamId = 0
  beforeAll(async () => {
    await alice.orgs.orgCreate({ username: "crew" })
    await alice.orgs.createOrgRepo("crew", { name: "tool" })
    teamId = (
      await alice.orgs.orgCreateTeam("crew", {
        name: "devs",
        permission: "write",
        units: ["repo.code", "repo.issues"],
        includes_all_repositories: false
      })
    ).data.id!
    await alice.teams.orgAddTeamMember(teamId, "bob")
  })

  it("gives a team a repository, and the repository lists the team", async () => {
    expect(await statusOf(alice.teams.orgAddTeamRepository(teamId, "crew", "tool"))).toBe(204)
    expect((await alice.teams.orgListTeamRepos(teamId)).data.map((r) => r.name)).toEqual(["tool"])
    expect((await alice.teams.orgListTeamRepo(teamId, "crew", "tool")).data.full_name).toBe("crew/tool")
    expect((await alice.repos.repoListTeams("crew", "tool")).data.map((t) => t.name)).toContain("devs")
    expect((await alice.repos.repoCheckTeam("crew", "tool", "devs")).data.name).toBe("devs")
    expect((await alice.orgs.teamSearch("crew", { q: "dev" })).data).toMatchObject({ ok: true })
    // bob, through the team, may write; his permissions in the organization say so.
    expect((await bob.repos.repoGetRepoPermissions("crew", "tool", "bob")).data.permission).toBe("write")
    const perms = (await bob.users.orgGetUserPermissions("bob", "crew")).data
    expect(perms.is_owner).toBe(false)
    // bob owns bobs-org (made for him above) and is a member of crew through the team.
    expect((await bob.user.orgListCurrentUserOrgs()).data.map((o) => o.name).sort()).toEqual(["bobs-org", "crew"])
    expect((await bob.user.userListTeams()).data.map((t) => t.name).sort()).toEqual(["Owners", "devs"])
    expect(await statusOf(alice.repos.repoDeleteTeam("crew", "tool", "devs"))).toBe(204)
    expect((await alice.repos.repoListTeams("crew", "tool")).data.map((t) => t.name)).not.toContain("devs")
  })
})

describe("gitea-js: git data and repository helpers", () => {
  it("reads refs, a tree, a blob, an annotated tag, a commit's diff and the .editorconfig", async () => {
    const refs = (await alice.repos.repoListAllGitRefs("alice", "app")).data
    expect(refs.map((r) => r.ref)).toEqual(expect.arrayContaining(["refs/heads/main", "refs/tags/v1.0"]))
    expect((await alice.repos.repoListGitRefs("alice", "app", "tags")).data.map((r) => r.ref)).toEqual([
      "refs/tags/v1.0"
    ])
    const tree = (await alice.repos.getTree("alice", "app", head)).data
    const entry = tree.tree?.find((e) => e.path === ".editorconfig")
    expect(entry?.type).toBe("blob")
    const blob = (await alice.repos.getBlob("alice", "app", entry!.sha!)).data
    expect(Buffer.from(blob.content!, "base64").toString()).toContain("indent_size = 2")
    const tag = (await alice.repos.getAnnotatedTag("alice", "app", tagSha)).data
    expect(tag.tag).toBe("v1.0")
    expect(tag.object?.sha).toBe(head)
    expect(
      (await alice.repos.repoDownloadCommitDiffOrPatch("alice", "app", head, "diff", { format: "text" })).data
    ).toContain("+indent_size = 2")
    expect((await alice.repos.repoGetEditorConfig("alice", "app", "src/main.ts")).data).toMatchObject({
      indent_style: "space",
      indent_size: "2"
    })
  })

  it("applies a patch as a commit", async () => {
    const patch = [
      "diff --git a/NOTES.md b/NOTES.md",
      "new file mode 100644",
      "--- /dev/null",
      "+++ b/NOTES.md",
      "@@ -0,0 +1 @@",
      "+from a patch",
      ""
    ].join("\n")
    const applied = (
      await alice.repos.repoApplyDiffPatch("alice", "app", {
        content: patch,
        message: "apply a patch",
        branch: "main"
      } as never)
    ).data
    expect(applied.commit?.message).toContain("apply a patch")
    expect((await alice.repos.repoGetRawFile("alice", "app", "NOTES.md")).data).toBeDefined()
  })

  it("reads pins, issue config, stargazers, permissions, search and the repository by id", async () => {
    const repo = (await alice.repos.repoGet("alice", "app")).data
    expect((await alice.repositories.repoGetById(repo.id!)).data.full_name).toBe("alice/app")
    expect((await alice.repos.repoNewPinAllowed("alice", "app")).data).toMatchObject({ issues: true })
    expect((await alice.repos.repoListPinnedIssues("alice", "app")).data).toEqual([])
    expect((await alice.repos.repoValidateIssueConfig("alice", "app")).data.valid).toBe(true)
    expect((await alice.repos.repoGetIssueConfig("alice", "app")).data.blank_issues_enabled).toBe(true)
    await alice.user.userCurrentPutStar("alice", "app")
    expect((await alice.repos.repoListStargazers("alice", "app")).data.map((u) => u.login)).toEqual(["alice"])
    expect((await alice.repos.repoSearch({ q: "app" })).data.data?.map((r) => r.full_name)).toContain("alice/app")
    expect((await alice.repos.repoListTagProtection("alice", "app")).data).toEqual([])
  })
})
