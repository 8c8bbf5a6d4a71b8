// Branch protection (CONTRACT-PULLS §13; Forgejo's routers/api/v1/repo/branch.go,
// models/git/protected_branch*.go, routers/private/hook_pre_receive.go, `TestAPIBranchProtection`,
// `TestBranchRuleMatch`, `doBranchProtect`): the rules' CRUD with Forgejo's quirks and priority;
// every enforced option with the real git client over HTTP and SSH (the pre-receive hook asks the
// server, with the quarantined objects), with Forgejo's `remote:` messages; the contents and
// branch APIs; the Branch JSON; and the merge gate the pull requests will call.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { listOrder, matchRule } from "../src/protection/Policy.ts"
import { ProtectionRepo } from "../src/protection/Repo.ts"
import { mergeRefusal, ProtectionService } from "../src/protection/Service.ts"
import { ReposService } from "../src/repos/Service.ts"
import { UsersService } from "../src/users/Service.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen, sshUrl, type TestKey } from "./support/ssh.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let sshPort: number
const work = mkdtempSync(join(tmpdir(), "hearth-protect-"))
const keys: Record<string, TestKey> = {}

const api = (method: string, path: string, body?: unknown, who = "alice") =>
  request(hearth, method, `/repos/alice/${path}`, basic(who), body)
const protect = (repo: string, rule: Record<string, unknown>) =>
  api("POST", `${repo}/branch_protections`, rule).then(async (res) => {
    expect(res.status, await res.clone().text()).toBe(201)
    return json(res)
  })

/** The clone URL of `repo` with `user`'s password in it. */
const httpUrl = (repo: string, user: string) => {
  const u = new URL(`${hearth.base}/alice/${repo}.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}

let n = 0
/** A fresh clone of alice/`repo` over HTTP as `user`. */
const clone = async (repo: string, user = "alice") => {
  const dir = join(work, `c${++n}`)
  await gitIn(work, ["clone", "--quiet", httpUrl(repo, user), dir])
  return dir
}
/** Commits `files` (path → content) on the current branch; answers the new id. */
const commit = async (dir: string, files: Record<string, string>, message = "change") => {
  for (const [path, content] of Object.entries(files)) {
    execFileSync("mkdir", ["-p", join(dir, path, "..")])
    writeFileSync(join(dir, path), content)
  }
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["commit", "--quiet", "-m", message])
  return gitIn(dir, ["rev-parse", "HEAD"])
}
const push = (dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  gitRun(dir, ["push", ...args], env)

/** Expects a push refused by the hook with Forgejo's message on a `remote:` line. */
const expectRefused = (outcome: { code: number | null; stderr: string }, message: string) => {
  expect(outcome.code, outcome.stderr).not.toBe(0)
  expect(outcome.stderr).toContain(`remote: Hearth: ${message}`)
  expect(outcome.stderr).toContain("pre-receive hook declined")
}

const atOf = (repo: string) =>
  hearth.run(
    Effect.gen(function* () {
      const owner = yield* (yield* UsersService).get("alice")
      const row = yield* (yield* ReposService).get(owner, repo)
      return { owner, repo: row }
    })
  )
const userRow = (name: string) => hearth.run(Effect.flatMap(Effect.service(UsersService), (u) => u.get(name)))

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    }
  })
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  for (const username of ["alice", "writer", "reader", "maint", "listed", "signer", "stranger"])
    await createUser(hearth, { username })
  for (const [name, priv] of [
    ["rules", false],
    ["guarded", false],
    ["hidden", true],
    ["old", false],
    ["plain", false]
  ] as const) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv, auto_init: true })
    expect(res.status).toBe(201)
    for (const [who, permission] of [
      ["writer", "write"],
      ["reader", "read"],
      ["maint", "admin"],
      ["listed", "write"],
      ["signer", "write"]
    ] as const) {
      expect((await api("PUT", `${name}/collaborators/${who}`, { permission })).status).toBe(204)
    }
  }
  expect((await api("PATCH", "old", { archived: true })).status).toBe(200)
  for (const who of ["alice", "writer", "listed"]) {
    keys[who] = keygen(work)
    const res = await request(hearth, "POST", "/user/keys", basic(who), { title: "k", key: keys[who].pub })
    expect(res.status).toBe(201)
  }
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("rule matching (Forgejo's TestBranchRuleMatch, TestBranchRuleMatchPriority)", () => {
  const rule = (ruleName: string, id: number, priority = 0) => ({ ruleName, id, priority })
  it("matches globs by segment (`*` within one, `**` across) and plain names case-insensitively", () => {
    const cases: ReadonlyArray<[string, string, boolean]> = [
      ["release/*", "release/v1.17", true],
      ["release/*", "release/test/1/v1.17", false],
      ["release/**", "release/test/1/v1.17", true],
      ["*", "release/v1.16", false],
      ["**", "release/v1.16", true],
      ["v1.*", "v1.17", true],
      ["{main,dev}", "dev", true],
      ["feat-[0-9]", "feat-7", true],
      ["Main", "main", true],
      ["main", "main2", false]
    ]
    for (const [pattern, branch, matches] of cases) {
      expect(matchRule([rule(pattern, 1)], branch) !== undefined, `${pattern} ~ ${branch}`).toBe(matches)
    }
  })
  it("prefers an exact name over any glob, then globs by priority and age", () => {
    const rules = [rule("**", 1), rule("release/*", 2), rule("release/v1", 3)]
    expect(matchRule(rules, "release/v1")?.id).toBe(3)
    expect(matchRule(rules, "release/v2")?.id).toBe(1)
    expect(matchRule([rule("**", 1, 2), rule("release/*", 2, 1)], "release/v2")?.id).toBe(2)
    expect(listOrder([rule("a/*", 1), rule("b", 2), rule("c", 3, 0), rule("*", 4, -1)]).map((r) => r.id)).toEqual([
      2, 3, 4, 1
    ])
  })
})

describe("branch protection CRUD", () => {
  it("creates a rule with every option stored and returned (201), as Forgejo's BranchProtection", async () => {
    const body = await protect("rules", {
      rule_name: "main",
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ["listed", "reader"],
      push_whitelist_deploy_keys: true,
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ["writer"],
      enable_status_check: true,
      status_check_contexts: ["ci/*"],
      required_approvals: 2,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: ["reader", "maint"],
      block_on_rejected_reviews: true,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      dismiss_stale_approvals: true,
      ignore_stale_approvals: true,
      require_signed_commits: true,
      protected_file_patterns: "*.lock",
      unprotected_file_patterns: "docs/*.md",
      apply_to_admins: true
    })
    expectSwagger(body, "BranchProtection")
    expect(body).toMatchObject({
      branch_name: "main",
      rule_name: "main",
      enable_push: true,
      enable_push_whitelist: true,
      // Forgejo drops, silently, push and merge users without code write; approvers need read.
      push_whitelist_usernames: ["listed"],
      push_whitelist_teams: [],
      push_whitelist_deploy_keys: true,
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ["writer"],
      enable_status_check: true,
      status_check_contexts: ["ci/*"],
      required_approvals: 2,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: ["reader", "maint"],
      block_on_rejected_reviews: true,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      dismiss_stale_approvals: true,
      ignore_stale_approvals: true,
      require_signed_commits: true,
      protected_file_patterns: "*.lock",
      unprotected_file_patterns: "docs/*.md",
      apply_to_admins: true
    })
    const got = await json(await api("GET", "rules/branch_protections/main"))
    expect(got).toEqual(body)
  })

  it("applies Forgejo's create rules: branch_name fallback, push flags only with enable_push, approvals ≥ 0, contexts null until set", async () => {
    const body = await protect("rules", {
      branch_name: "dev",
      enable_push_whitelist: true,
      push_whitelist_deploy_keys: true,
      required_approvals: -3
    })
    expect(body).toMatchObject({
      rule_name: "dev",
      branch_name: "dev",
      enable_push: false,
      enable_push_whitelist: false,
      push_whitelist_deploy_keys: false,
      required_approvals: 0,
      status_check_contexts: null
    })
    const glob = await protect("rules", { rule_name: "release/**" })
    expect(glob.branch_name).toBe("")
    // The branch need not exist.
    await protect("rules", { rule_name: "main/doesnotexist" })
  })

  it("refuses bad input with Forgejo's statuses and messages, storing nothing", async () => {
    const cases: ReadonlyArray<[unknown, number, string]> = [
      [{}, 400, "both rule_name and branch_name are empty"],
      [{ rule_name: "main" }, 403, "Branch protection already exist"],
      [{ rule_name: "x", push_whitelist_usernames: ["nobody"] }, 422, "user does not exist [uid: 0, name: nobody]"],
      [{ rule_name: "x", required_approvals: 1.5 }, 422, "[RequiredApprovals]: must be an integer"],
      // Longer than Forgejo's column (a 500 there); the fuzz guard found it.
      [{ rule_name: "x".repeat(256) }, 422, "[RuleName]: MaxSize (255)"],
      [{ branch_name: "x".repeat(256) }, 422, "[RuleName]: MaxSize (255)"]
    ]
    for (const [body, status, message] of cases) {
      const res = await api("POST", "rules/branch_protections", body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect((await json(res)).message).toBe(message)
    }
    expect((await api("GET", "rules/branch_protections/x")).status).toBe(404)
  })

  it("lists plain names first, then globs, each by age; a glob name is reached percent-encoded", async () => {
    const list = await json(await api("GET", "rules/branch_protections"))
    expect(list.map((r: { rule_name: string }) => r.rule_name)).toEqual([
      "main",
      "dev",
      "main/doesnotexist",
      "release/**"
    ])
    const res = await api("GET", `rules/branch_protections/${encodeURIComponent("release/**")}`)
    expect(res.status).toBe(200)
    expect((await json(res)).rule_name).toBe("release/**")
  })

  it("edits with Forgejo's rules: absent keeps, [] clears, enable_push=false clears the push whitelist, negative approvals ignored", async () => {
    const edited = await json(
      await api("PATCH", "rules/branch_protections/main", {
        required_approvals: -1,
        status_check_contexts: [],
        merge_whitelist_usernames: [],
        protected_file_patterns: ""
      })
    )
    expectSwagger(edited, "BranchProtection")
    expect(edited).toMatchObject({
      required_approvals: 2,
      status_check_contexts: [],
      merge_whitelist_usernames: [],
      protected_file_patterns: "",
      push_whitelist_usernames: ["listed"],
      enable_push_whitelist: true
    })
    // The whitelist flag is read only when enable_push is sent too (Forgejo's quirk).
    const ignored = await json(await api("PATCH", "rules/branch_protections/main", { enable_push_whitelist: false }))
    expect(ignored.enable_push_whitelist).toBe(true)
    const off = await json(await api("PATCH", "rules/branch_protections/main", { enable_push: false }))
    expect(off).toMatchObject({ enable_push: false, enable_push_whitelist: false, push_whitelist_deploy_keys: false })
    expect((await api("PATCH", "rules/branch_protections/nothere", {})).status).toBe(404)
  })

  it("deletes (204), then 404", async () => {
    expect((await api("DELETE", "rules/branch_protections/dev")).status).toBe(204)
    expect((await api("DELETE", "rules/branch_protections/dev")).status).toBe(404)
    expect((await api("GET", "rules/branch_protections/dev")).status).toBe(404)
  })

  it("orders glob rules by the priority endpoint (exact names still win)", async () => {
    await protect("rules", { rule_name: "release/*" })
    expect((await api("POST", "rules/branches", { new_branch_name: "release/v1" })).status).toBe(201)
    const effective = async (branch: string) =>
      (await json(await api("GET", `rules/branches/${branch}`))).effective_branch_protection_name
    // By age: the older `release/**` wins.
    expect(await effective("release/v1")).toBe("release/**")
    // Forgejo's JSON has no rule id: read them from the rules themselves.
    const at = await atOf("rules")
    const idOf = (name: string) =>
      hearth.run(
        Effect.flatMap(Effect.service(ProtectionRepo), (r) =>
          Effect.map(r.branchRule(at.repo.id, name), (found) => (found._tag === "Some" ? found.value.id : -1))
        )
      )
    const ids = [await idOf("release/*"), await idOf("release/**")]
    const res = await api("POST", "rules/branch_protections/priority", { ids })
    expect(res.status).toBe(204)
    expect(await effective("release/v1")).toBe("release/*")
    const names = (await json(await api("GET", "rules/branch_protections"))).map(
      (r: { rule_name: string }) => r.rule_name
    )
    expect(names.indexOf("release/*")).toBeLessThan(names.indexOf("release/**"))
    // An exact name beats any glob whatever the priorities.
    await protect("rules", { rule_name: "release/v1" })
    expect(await effective("release/v1")).toBe("release/v1")
    // Ids of another repository's rules, or twice the same, change nothing.
    const bad = await api("POST", "rules/branch_protections/priority", { ids: [ids[0], ids[0]] })
    expect(bad.status).toBe(422)
    expect((await api("POST", "rules/branch_protections/priority", { ids: [999999] })).status).toBe(422)
  })

  it("is for repository admins only, reads too: 401, 403 (Forgejo's message), 404 hidden, 423 archived", async () => {
    expect((await request(hearth, "GET", "/repos/alice/rules/branch_protections")).status).toBe(401)
    for (const who of ["reader", "writer"]) {
      const res = await api("GET", "rules/branch_protections", undefined, who)
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe(
        "user should be an owner or a collaborator with admin write of a repository"
      )
    }
    expect((await api("GET", "rules/branch_protections", undefined, "maint")).status).toBe(200)
    expect((await api("GET", "rules/branch_protections", undefined, "siteadmin")).status).toBe(200)
    expect((await api("GET", "hidden/branch_protections", undefined, "stranger")).status).toBe(404)
    expect((await api("POST", "old/branch_protections", { rule_name: "main" })).status).toBe(423)
    expect((await api("GET", "old/branch_protections")).status).toBe(200)
  })
})

describe("enforcement on git pushes (HTTP and SSH), in the pre-receive hook", () => {
  const BRANCHES = ["force/x", "wl", "files", "docs", "signed", "deploy-ok", "deploy-no", "free"]
  let deployKey: TestKey
  let gnupg: string
  let signingKey = ""

  beforeAll(async () => {
    const dir = await clone("guarded")
    for (const branch of BRANCHES) await gitIn(dir, ["branch", branch])
    expect((await push(dir, ["origin", ...BRANCHES])).code).toBe(0)
    await protect("guarded", { rule_name: "main" })
    await protect("guarded", { rule_name: "force/*", enable_push: true })
    await protect("guarded", {
      rule_name: "wl",
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ["listed"]
    })
    await protect("guarded", { rule_name: "files", enable_push: true, protected_file_patterns: "*.lock; secret/**" })
    await protect("guarded", { rule_name: "docs", unprotected_file_patterns: "docs/*.md" })
    await protect("guarded", { rule_name: "signed", enable_push: true, require_signed_commits: true })
    await protect("guarded", { rule_name: "deploy-ok", enable_push: true })
    await protect("guarded", {
      rule_name: "deploy-no",
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ["listed"]
    })
    deployKey = keygen(work)
    const added = await api("POST", "guarded/keys", { title: "deployer", key: deployKey.pub, read_only: false })
    expect(added.status).toBe(201)
    // A GPG key of `signer`, registered on the account, for signed commits.
    gnupg = mkdtempSync(join(tmpdir(), "g-"))
    const gpg = (args: ReadonlyArray<string>) =>
      execFileSync("gpg", ["--batch", "--homedir", gnupg, ...args], { encoding: "utf8" })
    gpg(["--passphrase", "", "--quick-gen-key", "Signer <signer@example.com>", "ed25519", "sign", "never"])
    signingKey = /^fpr:+([0-9A-F]+):/m.exec(gpg(["--with-colons", "--list-secret-keys"]))![1]!
    const armored = gpg(["--armor", "--export", signingKey])
    const res = await request(hearth, "POST", "/user/gpg_keys", basic("signer"), { armored_public_key: armored })
    expect(res.status, await res.clone().text()).toBe(201)
  }, 120_000)
  afterAll(() => rmSync(gnupg, { recursive: true, force: true }))

  const branchSha = async (branch: string) => (await json(await api("GET", `guarded/branches/${branch}`))).commit.id
  const sshEnv = (who: string) => ({ GIT_SSH_COMMAND: gitSshCommand(keys[who]!.file, sshPort) })
  const sshRemote = () => sshUrl(sshPort, "alice/guarded.git")

  it("refuses a push to a branch nobody may push to, over HTTP and over SSH, and moves nothing", async () => {
    const before = await branchSha("main")
    const dir = await clone("guarded", "writer")
    await commit(dir, { "a.txt": "writer" })
    expectRefused(await push(dir, ["origin", "main"]), "Not allowed to push to protected branch main")
    expectRefused(
      await push(dir, [sshRemote(), "main"], sshEnv("writer")),
      "Not allowed to push to protected branch main"
    )
    // The owner too: Forgejo has no admin bypass on pushes.
    const own = await clone("guarded")
    await commit(own, { "a.txt": "owner" })
    expectRefused(await push(own, ["origin", "main"]), "Not allowed to push to protected branch main")
    expect(await branchSha("main")).toBe(before)
  })

  it("refuses deleting a protected branch, and the default branch whatever the rules", async () => {
    const dir = await clone("guarded", "writer")
    expectRefused(await push(dir, ["origin", ":force/x"]), "branch force/x is protected from deletion")
    expectRefused(await push(dir, ["origin", ":main"]), "branch main is the default branch and cannot be deleted")
    expect((await push(dir, [sshRemote(), ":free"], sshEnv("writer"))).code).toBe(0)
    // In a repository without any rule too (the hook alone refuses it there, without asking the server).
    const plain = await clone("plain", "writer")
    expectRefused(await push(plain, ["origin", ":main"]), "branch main is the default branch and cannot be deleted")
    expectRefused(
      await push(plain, [sshUrl(sshPort, "alice/plain.git"), ":main"], sshEnv("writer")),
      "branch main is the default branch and cannot be deleted"
    )
    expect((await api("GET", "plain/branches/main")).status).toBe(200)
    expect((await api("GET", "guarded/branches/force/x")).status).toBe(200)
  })

  it("lets fast-forwards through and refuses force pushes, even for the owner", async () => {
    const dir = await clone("guarded", "writer")
    await gitIn(dir, ["checkout", "--quiet", "force/x"])
    const first = await commit(dir, { "f.txt": "1" })
    expect((await push(dir, ["origin", "force/x"])).code).toBe(0)
    expect(await branchSha("force/x")).toBe(first)
    await gitIn(dir, ["reset", "--quiet", "--hard", "HEAD~1"])
    await commit(dir, { "f.txt": "other" })
    expectRefused(await push(dir, ["--force", "origin", "force/x"]), "branch force/x is protected from force push")
    const own = join(work, "own-force")
    await gitIn(work, ["clone", "--quiet", "--branch", "force/x", httpUrl("guarded", "alice"), own])
    await gitIn(own, ["reset", "--quiet", "--hard", "HEAD~1"])
    await commit(own, { "g.txt": "x" })
    expectRefused(
      await push(own, ["--force", sshRemote(), "force/x"], sshEnv("alice")),
      "branch force/x is protected from force push"
    )
    expect(await branchSha("force/x")).toBe(first)
  })

  it("lets only whitelisted users push where the rule has a push whitelist", async () => {
    const dir = await clone("guarded", "writer")
    await gitIn(dir, ["checkout", "--quiet", "wl"])
    await commit(dir, { "w.txt": "writer" })
    expectRefused(await push(dir, ["origin", "wl"]), "Not allowed to push to protected branch wl")
    const listed = await clone("guarded", "listed")
    await gitIn(listed, ["checkout", "--quiet", "wl"])
    const sha = await commit(listed, { "w.txt": "listed" })
    expect(
      (await push(listed, [sshRemote(), "wl"], { GIT_SSH_COMMAND: gitSshCommand(keys.listed!.file, sshPort) })).code
    ).toBe(0)
    expect(await branchSha("wl")).toBe(sha)
  })

  it("refuses changes to protected files (lower-cased path in the message), allows other files", async () => {
    const dir = await clone("guarded")
    await gitIn(dir, ["checkout", "--quiet", "files"])
    const ok = await commit(dir, { "src/app.ts": "x" })
    expect((await push(dir, ["origin", "files"])).code).toBe(0)
    expect(await branchSha("files")).toBe(ok)
    await commit(dir, { "yarn.lock": "x" })
    expectRefused(await push(dir, ["origin", "files"]), "branch files is protected from changing file yarn.lock")
    await gitIn(dir, ["reset", "--quiet", "--hard", ok])
    await commit(dir, { "Secret/Deep/Key.TXT": "x" })
    expectRefused(
      await push(dir, ["origin", "files"]),
      "branch files is protected from changing file secret/deep/key.txt"
    )
  })

  it("lets anyone with write push changes that only touch unprotected files", async () => {
    const dir = await clone("guarded", "writer")
    await gitIn(dir, ["checkout", "--quiet", "docs"])
    const ok = await commit(dir, { "docs/guide.md": "x", "docs/faq.md": "y" })
    expect((await push(dir, ["origin", "docs"])).code).toBe(0)
    expect(await branchSha("docs")).toBe(ok)
    await commit(dir, { "docs/more.md": "x", "src/code.ts": "y" })
    expectRefused(await push(dir, ["origin", "docs"]), "Not allowed to push to protected branch docs")
  })

  it("requires commits signed with a GPG key of the pusher where the rule says so", async () => {
    const dir = await clone("guarded", "signer")
    await gitIn(dir, ["checkout", "--quiet", "signed"])
    const unsigned = await commit(dir, { "s.txt": "1" })
    expectRefused(
      await push(dir, ["origin", "signed"]),
      `branch signed is protected from unverified commit ${unsigned}`
    )
    await gitIn(dir, ["reset", "--quiet", "--hard", "HEAD~1"])
    const signEnv = { GNUPGHOME: gnupg }
    writeFileSync(join(dir, "s.txt"), "signed")
    await gitIn(dir, ["add", "-A"])
    await gitIn(dir, ["-c", `user.signingkey=${signingKey}`, "commit", "--quiet", "-S", "-m", "signed"], signEnv)
    const signed = await gitIn(dir, ["rev-parse", "HEAD"])
    expect((await push(dir, ["origin", "signed"])).code).toBe(0)
    expect(await branchSha("signed")).toBe(signed)
    // The same signed commit pushed by someone whose key it is not: not verified for them.
    const other = await clone("guarded", "writer")
    await gitIn(other, ["checkout", "--quiet", "signed"])
    writeFileSync(join(other, "t.txt"), "t")
    await gitIn(other, ["add", "-A"])
    await gitIn(other, ["-c", `user.signingkey=${signingKey}`, "commit", "--quiet", "-S", "-m", "by writer"], signEnv)
    const foreign = await gitIn(other, ["rev-parse", "HEAD"])
    expectRefused(
      await push(other, ["origin", "signed"]),
      `branch signed is protected from unverified commit ${foreign}`
    )
  })

  it("lets a deploy key push only where the rule has no whitelist or whitelists deploy keys", async () => {
    const dir = await clone("guarded")
    const env = { GIT_SSH_COMMAND: gitSshCommand(deployKey.file, sshPort) }
    await gitIn(dir, ["checkout", "--quiet", "deploy-ok"])
    const sha = await commit(dir, { "d.txt": "1" })
    expect((await push(dir, [sshRemote(), "deploy-ok"], env)).code).toBe(0)
    expect(await branchSha("deploy-ok")).toBe(sha)
    await gitIn(dir, ["checkout", "--quiet", "deploy-no"])
    await commit(dir, { "d.txt": "2" })
    expectRefused(await push(dir, [sshRemote(), "deploy-no"], env), "Not allowed to push to protected branch deploy-no")
    expect(
      (
        await api("PATCH", "guarded/branch_protections/deploy-no", {
          enable_push: true,
          enable_push_whitelist: true,
          push_whitelist_deploy_keys: true
        })
      ).status
    ).toBe(200)
    expect((await push(dir, [sshRemote(), "deploy-no"], env)).code).toBe(0)
  })

  it("checks each ref of a push: one refused ref refuses the push", async () => {
    const dir = await clone("guarded", "writer")
    await gitIn(dir, ["checkout", "--quiet", "-b", "brand-new"])
    await commit(dir, { "n.txt": "1" })
    const outcome = await push(dir, ["--atomic", "origin", "brand-new", "HEAD:main"])
    expectRefused(outcome, "Not allowed to push to protected branch main")
    expect((await api("GET", "guarded/branches/brand-new")).status).toBe(404)
  })
})

describe("enforcement on the contents and branch APIs, and the Branch JSON", () => {
  const put = (branch: string, path: string, who = "alice", extra: Record<string, unknown> = {}) =>
    api("POST", `guarded/contents/${path}`, { content: Buffer.from("x").toString("base64"), branch, ...extra }, who)

  it("refuses commits where pushing is not allowed (403 with Forgejo's message)", async () => {
    const res = await put("main", "api.txt")
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("user cannot commit to repo [user: alice]")
    // Onto a new branch: the rule of the new branch decides.
    await protect("guarded", { rule_name: "locked-*" })
    const locked = await put("main", "api.txt", "writer", { new_branch: "locked-1" })
    expect(locked.status).toBe(403)
    expect((await api("GET", "guarded/branches/locked-1")).status).toBe(404)
    expect((await put("main", "api.txt", "writer", { new_branch: "force/y" })).status).toBe(201)
    const writer = await api("POST", "guarded/contents/api2.txt", { content: "eA==", branch: "wl" }, "writer")
    expect(writer.status).toBe(403)
    expect((await json(writer)).message).toBe("user cannot commit to repo [user: writer]")
    expect((await api("POST", "guarded/contents/api2.txt", { content: "eA==", branch: "wl" }, "listed")).status).toBe(
      201
    )
  })

  it("refuses protected files, allows unprotected-only changes, refuses where signed commits are required", async () => {
    const lock = await put("files", "Cargo.lock")
    expect(lock.status).toBe(403)
    expect((await json(lock)).message).toBe("path is protected and can not be changed [path: Cargo.lock]")
    expect((await put("files", "fine.txt")).status).toBe(201)
    expect((await put("docs", "docs/api.md", "writer")).status).toBe(201)
    expect((await put("docs", "api.txt", "writer")).status).toBe(403)
    const signed = await put("signed", "x.txt", "signer")
    expect(signed.status).toBe(403)
    expect((await json(signed)).message).toBe("user cannot commit to repo [user: signer]")
  })

  it("refuses deleting or renaming a protected branch (403 branch protected)", async () => {
    const del = await api("DELETE", "guarded/branches/force/x", undefined, "writer")
    expect(del.status).toBe(403)
    expect((await json(del)).message).toBe("branch protected")
    expect((await api("PATCH", "guarded/branches/files", { name: "renamed" })).status).toBe(403)
    expect((await api("GET", "guarded/branches/files")).status).toBe(200)
  })

  it("shows the rule and what the viewer may do in the Branch JSON", async () => {
    const main = await json(await api("GET", "guarded/branches/main", undefined, "writer"))
    expect(main).toMatchObject({
      protected: true,
      effective_branch_protection_name: "main",
      user_can_push: false,
      user_can_merge: true
    })
    const wl = async (who: string) => json(await api("GET", "guarded/branches/wl", undefined, who))
    expect(await wl("writer")).toMatchObject({ protected: true, user_can_push: false })
    expect(await wl("listed")).toMatchObject({ protected: true, user_can_push: true })
    const list = await json(await api("GET", "guarded/branches", undefined, "reader"))
    const byName = new Map(list.map((b: { name: string }) => [b.name, b]))
    expect(byName.get("files")).toMatchObject({ protected: true, user_can_push: false, user_can_merge: false })
    expect(byName.get("brand-new")).toBeUndefined()
  })
})

describe("the merge gate (mergeBlockers) over real rules", () => {
  const facts = (over: Record<string, unknown> = {}) => ({ approvals: [], statuses: [], outdated: false, ...over })
  const decide = async (branch: string, doer: string, over: Record<string, unknown> = {}) => {
    const at = await atOf("guarded")
    const user = await userRow(doer)
    return hearth.run(
      Effect.flatMap(Effect.service(ProtectionService), (p) =>
        p.mergeBlockers(at, branch, { doer: user, ...facts(over) })
      )
    )
  }

  beforeAll(async () => {
    await protect("guarded", {
      rule_name: "merge/*",
      enable_status_check: true,
      status_check_contexts: ["ci/*"],
      required_approvals: 1,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: ["listed"],
      block_on_outdated_branch: true,
      apply_to_admins: true
    })
    await protect("guarded", {
      rule_name: "open/*",
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ["listed"]
    })
  })

  it("needs required contexts (globs) to succeed", async () => {
    const listed = (await userRow("listed")).id
    const approved = { approvals: [{ userId: listed, official: true, stale: false }] }
    const pending = await decide("merge/a", "writer", {
      ...approved,
      statuses: [{ context: "ci/build", state: "pending" }]
    })
    expect(pending.reasons).toEqual(["Not all required status checks successful"])
    const none = await decide("merge/a", "writer", { ...approved, statuses: [{ context: "lint", state: "success" }] })
    expect(none.reasons).toEqual(["Not all required status checks successful"])
    const green = await decide("merge/a", "writer", {
      ...approved,
      statuses: [{ context: "ci/build", state: "success" }]
    })
    expect(green).toMatchObject({ rule: "merge/*", userMayMerge: true, reasons: [] })
    expect(mergeRefusal(green, false)).toBeUndefined()
  })

  it("counts only approvals from the approvals whitelist, and the outdated branch", async () => {
    const writerId = (await userRow("writer")).id
    const green = { statuses: [{ context: "ci/x", state: "success" }] }
    const byWriter = await decide("merge/a", "writer", {
      ...green,
      approvals: [{ userId: writerId, official: true, stale: false }],
      outdated: true
    })
    expect(byWriter.reasons).toEqual(["Does not have enough approvals", "The head branch is behind the base branch"])
    expect(mergeRefusal(byWriter, false)).toBe("not allowed to merge [reason: Does not have enough approvals]")
  })

  it("lets force_merge through only for site admins, or repo admins when the rule does not apply to admins", async () => {
    expect((await decide("merge/a", "alice")).mayForce).toBe(false)
    expect((await decide("merge/a", "siteadmin")).mayForce).toBe(true)
    expect((await api("PATCH", "guarded/branch_protections/merge%2F*", { apply_to_admins: false })).status).toBe(200)
    const owner = await decide("merge/a", "alice")
    expect(owner.mayForce).toBe(true)
    expect(mergeRefusal(owner, true)).toBeUndefined()
    expect(mergeRefusal(owner, false)).toMatch(/^not allowed to merge \[reason: /)
    expect((await decide("merge/a", "writer")).mayForce).toBe(false)
  })

  it("applies the merge whitelist to who may merge at all, and nothing without a rule", async () => {
    const writer = await decide("open/a", "writer")
    expect(writer.userMayMerge).toBe(false)
    expect(mergeRefusal(writer, true)).toBe("User not allowed to merge PR")
    expect((await decide("open/a", "listed")).userMayMerge).toBe(true)
    expect(await decide("unruled", "writer")).toEqual({
      rule: undefined,
      userMayMerge: true,
      reasons: [],
      mayForce: true
    })
    expect((await decide("unruled", "reader")).userMayMerge).toBe(false)
  })
})
