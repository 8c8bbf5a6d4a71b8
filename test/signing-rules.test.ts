// [repository.signing]'s rules (Forgejo's services/asymkey/sign.go, issue 23 item 5): each
// condition decides whether the instance signs a commit it makes — `pubkey` (the user registered a
// GPG key), `twofa`, `parentsigned`, and for merges `approved` and `commitssigned` — checked with
// real `git verify-commit` against the served key and by the API's `verification`; wiki edits
// signed as WIKI says; commits signed by a user's registered key verified as theirs; a misspelt
// rule refused at start.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Secret, TOTP } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolveSettings } from "../src/config/Settings.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
/** A keyring holding only the instance's served public key (the verifier's). */
let verifier: string
/** keyed's own keyring, with the key keyed registered. */
let keyedHome: string
/** secure's token, made before two-factor was switched on. */
let secure = ""

const keyed = () => basic("keyed")
const plain = () => basic("plain")
const secureAuth = () => `token ${secure}`

const must = async (res: Response, status: number) => {
  expect(res.status, await res.clone().text()).toBe(status)
  return res
}

beforeAll(async () => {
  hearth = await startHearth({
    "repository.signing": {
      SIGNING_KEY: "default",
      SIGNING_NAME: "Forge Signer",
      SIGNING_EMAIL: "signer@example.com",
      INITIAL_COMMIT: "pubkey",
      CRUD_ACTIONS: "twofa, parentsigned",
      MERGES: "approved, commitssigned",
      WIKI: "pubkey"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-signing-rules-"))
  verifier = join(work, "verifier")
  keyedHome = join(work, "keyed")
  mkdirSync(verifier, { mode: 0o700 })
  mkdirSync(keyedHome, { mode: 0o700 })
  for (const username of ["keyed", "plain", "secure"]) await createUser(hearth, { username })
  execFileSync("gpg", ["--batch", "--import"], {
    input: await (await request(hearth, "GET", "/signing-key.gpg")).text(),
    env: { ...process.env, GNUPGHOME: verifier }
  })
  // keyed registers a GPG key naming its address (pubkey).
  const gpg = (args: ReadonlyArray<string>) =>
    execFileSync("gpg", ["--batch", ...args], { env: { ...process.env, GNUPGHOME: keyedHome } }).toString()
  gpg(["--passphrase", "", "--quick-gen-key", "keyed <keyed@example.com>", "ed25519", "sign", "never"])
  await must(
    await request(hearth, "POST", "/user/gpg_keys", keyed(), {
      armored_public_key: gpg(["--armor", "--export", "keyed@example.com"])
    }),
    201
  )
  // secure switches two-factor on (its token made first: the API then needs a passcode with a password).
  secure = await createToken(hearth, "secure")
  const enrolled = await json(await must(await request(hearth, "POST", "/user/twofa", basic("secure")), 201))
  const totp = new TOTP({ secret: Secret.fromBase32(enrolled.secret) })
  const left = 30_000 - (Date.now() % 30_000)
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
  await must(
    await request(hearth, "POST", "/user/twofa/verify", basic("secure"), {
      passcode: totp.generate({ timestamp: Date.now() - 30_000 })
    }),
    204
  )
}, 180_000)

afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

/** `git verify-commit` of `revision` in a fresh clone of `repo` (`owner/name`, or a wiki), with the served key only. */
const verify = async (repo: string, revision: string) => {
  const dir = mkdtempSync(join(work, "clone-"))
  await gitIn(work, ["clone", "-q", `${hearth.base}/${repo}.git`, dir])
  await gitIn(dir, ["fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*"])
  const outcome = await gitRun(dir, ["verify-commit", "--raw", revision], { GNUPGHOME: verifier })
  return { signed: outcome.code === 0 && outcome.stderr.includes("GOODSIG"), stderr: outcome.stderr }
}

const tipOf = async (repo: string, branch: string) =>
  (await json(await must(await request(hearth, "GET", `/repos/${repo}/branches/${branch}`), 200))).commit.id as string

const gitCommit = async (repo: string, sha: string) =>
  json(await must(await request(hearth, "GET", `/repos/${repo}/git/commits/${sha}`), 200))

const put = (repo: string, auth: string, path: string, extra: Record<string, unknown> = {}) =>
  request(hearth, "POST", `/repos/${repo}/contents/${path}`, auth, {
    content: Buffer.from(`${path}\n`).toString("base64"),
    ...extra
  })

const instanceSigned = {
  verified: true,
  reason: expect.stringMatching(/^Forge Signer \/ [0-9A-F]{16}$/),
  signer: { name: "Forge Signer", email: "signer@example.com", username: "" },
  signature: expect.stringMatching(/^-----BEGIN PGP SIGNATURE-----/)
}
const unsigned = { verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" }

describe("INITIAL_COMMIT = pubkey", () => {
  it("signs the initial commit of a user with a GPG key, and reports it on every commit route", async () => {
    await must(await request(hearth, "POST", "/user/repos", keyed(), { name: "app", auto_init: true }), 201)
    expect((await verify("keyed/app", "origin/main")).signed).toBe(true)
    const sha = await tipOf("keyed/app", "main")
    const detail = await gitCommit("keyed/app", sha)
    expect(detail.commit.verification).toMatchObject(instanceSigned)
    expect(detail.commit.verification.payload).toContain(`author keyed <keyed@example.com>`)
    const single = await json(await must(await request(hearth, "GET", `/repos/keyed/app/commits/${sha}`), 200))
    expect(single.commit.verification).toMatchObject(instanceSigned)
    const listed = await json(await must(await request(hearth, "GET", "/repos/keyed/app/commits"), 200))
    expect(listed[0].commit.verification).toMatchObject(instanceSigned)
    const branch = await json(await must(await request(hearth, "GET", "/repos/keyed/app/branches/main"), 200))
    expect(branch.commit.verification).toMatchObject(instanceSigned)
    // The web commit page shows it.
    const page = await (await fetch(`${hearth.base}/keyed/app/commit/${sha}`)).text()
    expect(page).toContain('data-testid="commit-verified"')
  })

  it("does not sign it for a user without one", async () => {
    await must(await request(hearth, "POST", "/user/repos", plain(), { name: "plain", auto_init: true }), 201)
    expect((await verify("plain/plain", "origin/main")).signed).toBe(false)
    const sha = await tipOf("plain/plain", "main")
    const detail = await gitCommit("plain/plain", sha)
    expect(detail.commit.verification).toEqual(unsigned)
    const page = await (await fetch(`${hearth.base}/plain/plain/commit/${sha}`)).text()
    expect(page).toContain('data-testid="commit-sha"')
    expect(page).not.toContain('data-testid="commit-verified"')
  })
})

describe("CRUD_ACTIONS = twofa, parentsigned", () => {
  beforeAll(async () => {
    for (const who of ["plain", "secure"]) {
      await must(
        await request(hearth, "PUT", `/repos/keyed/app/collaborators/${who}`, keyed(), { permission: "write" }),
        204
      )
    }
  })

  it("signs a contents commit of a user with two-factor on a signed parent", async () => {
    const body = await json(await must(await put("keyed/app", secureAuth(), "a.txt"), 201))
    expect(body.verification).toMatchObject(instanceSigned)
    expect((await verify("keyed/app", body.commit.sha)).signed).toBe(true)
  })

  it("does not sign one of a user without two-factor, the parent signed", async () => {
    const parent = await tipOf("keyed/app", "main")
    expect((await gitCommit("keyed/app", parent)).commit.verification.verified).toBe(true)
    const body = await json(await must(await put("keyed/app", plain(), "b.txt"), 201))
    expect(body.verification).toEqual(unsigned)
    expect((await verify("keyed/app", body.commit.sha)).signed).toBe(false)
  })

  it("does not sign one on an unsigned parent, two-factor on; diffpatch follows the same rule", async () => {
    const body = await json(await must(await put("keyed/app", secureAuth(), "c.txt"), 201))
    expect(body.verification).toEqual(unsigned)
    expect((await verify("keyed/app", body.commit.sha)).signed).toBe(false)
    // A patch on that unsigned parent is not signed either.
    const patch = await request(hearth, "POST", "/repos/keyed/app/diffpatch", secureAuth(), {
      content: "diff --git a/c.txt b/c.txt\n--- a/c.txt\n+++ b/c.txt\n@@ -1 +1 @@\n-c.txt\n+changed\n",
      sha: "x"
    })
    expect((await json(await must(patch, 200))).verification).toEqual(unsigned)
  })

  it("lets a branch that requires signed commits take the commits the instance signs, and only those", async () => {
    // A branch whose tip is signed (the repository's initial commit), protected with require_signed_commits.
    const commits = await json(await must(await request(hearth, "GET", "/repos/keyed/app/commits?limit=50"), 200))
    const signedTip = (commits as Array<{ sha: string; commit: { verification: { verified: boolean } } }>).findLast(
      (c) => c.commit.verification.verified
    )!.sha
    await must(
      await request(hearth, "POST", "/repos/keyed/app/branches", keyed(), {
        new_branch_name: "guarded",
        old_ref_name: signedTip
      }),
      201
    )
    await must(
      await request(hearth, "POST", "/repos/keyed/app/branch_protections", keyed(), {
        rule_name: "guarded",
        enable_push: true,
        require_signed_commits: true
      }),
      201
    )
    // Without two-factor the instance would not sign: refused (Forgejo's ErrWontSign), nothing written.
    const refused = await put("keyed/app", plain(), "g1.txt", { branch: "guarded" })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toContain("user cannot commit to repo")
    expect(await tipOf("keyed/app", "guarded")).toBe(signedTip)
    // With two-factor, on the signed tip, the instance signs: taken.
    const body = await json(await must(await put("keyed/app", secureAuth(), "g2.txt", { branch: "guarded" }), 201))
    expect(body.verification).toMatchObject(instanceSigned)
    expect(await tipOf("keyed/app", "guarded")).toBe(body.commit.sha)
  })
})

describe("MERGES = approved, commitssigned", () => {
  /** A branch `name` off merges' main with one contents commit by `auth`, and a pull request of it. */
  const pullOf = async (name: string, auth: string) => {
    await must(await put("keyed/merges", auth, `${name}.txt`, { new_branch: name }), 201)
    const pull = await must(
      await request(hearth, "POST", "/repos/keyed/merges/pulls", keyed(), { head: name, base: "main", title: name }),
      201
    )
    return (await json(pull)).number as number
  }
  const approve = async (index: number) =>
    must(
      await request(hearth, "POST", `/repos/keyed/merges/pulls/${index}/reviews`, secureAuth(), { event: "APPROVED" }),
      200
    )
  const merge = async (index: number) => {
    await must(await request(hearth, "POST", `/repos/keyed/merges/pulls/${index}/merge`, keyed(), { Do: "merge" }), 200)
    return tipOf("keyed/merges", "main")
  }
  const pulls: Record<string, number> = {}

  beforeAll(async () => {
    await must(await request(hearth, "POST", "/user/repos", keyed(), { name: "merges", auto_init: true }), 201)
    for (const who of ["plain", "secure"]) {
      await must(
        await request(hearth, "PUT", `/repos/keyed/merges/collaborators/${who}`, keyed(), { permission: "write" }),
        204
      )
    }
    await must(
      await request(hearth, "POST", "/repos/keyed/merges/branch_protections", keyed(), {
        rule_name: "main",
        required_approvals: 0
      }),
      201
    )
    // Signed commits (secure, on the signed initial commit) and an unsigned one (plain).
    pulls.good1 = await pullOf("good1", secureAuth())
    pulls.good2 = await pullOf("good2", secureAuth())
    pulls.bad = await pullOf("bad", plain())
  }, 120_000)

  it("does not sign the merge of signed commits without an approval", async () => {
    const tip = await merge(pulls.good1!)
    expect((await verify("keyed/merges", tip)).signed).toBe(false)
    expect((await gitCommit("keyed/merges", tip)).commit.verification).toEqual(unsigned)
  })

  it("signs the merge of signed commits once approved", async () => {
    await approve(pulls.good2!)
    const tip = await merge(pulls.good2!)
    expect((await verify("keyed/merges", tip)).signed).toBe(true)
    expect((await gitCommit("keyed/merges", tip)).commit.verification).toMatchObject(instanceSigned)
  })

  it("does not sign the merge of an unsigned commit, approved", async () => {
    await approve(pulls.bad!)
    const tip = await merge(pulls.bad!)
    expect((await verify("keyed/merges", tip)).signed).toBe(false)
  })
})

describe("WIKI = pubkey", () => {
  it("signs the wiki edit of a user with a GPG key, not that of one without", async () => {
    const page = (content: string) => ({ title: "Home", content_base64: Buffer.from(content).toString("base64") })
    await must(await request(hearth, "POST", "/repos/keyed/app/wiki/new", keyed(), page("one")), 201)
    expect((await verify("keyed/app.wiki", "HEAD")).signed).toBe(true)
    await must(await request(hearth, "PATCH", "/repos/keyed/app/wiki/page/Home", plain(), page("two")), 200)
    expect((await verify("keyed/app.wiki", "HEAD")).signed).toBe(false)
  })
})

describe("commits signed by a user's registered key", () => {
  it("are verified as the user's, with Forgejo's reason", async () => {
    const remote = new URL(`${hearth.base}/keyed/app.git`)
    remote.username = "keyed"
    remote.password = "password123"
    const dir = mkdtempSync(join(work, "push-"))
    await gitIn(work, ["clone", "-q", remote.toString(), dir])
    const me = {
      GNUPGHOME: keyedHome,
      GIT_AUTHOR_NAME: "keyed",
      GIT_AUTHOR_EMAIL: "keyed@example.com",
      GIT_COMMITTER_NAME: "keyed",
      GIT_COMMITTER_EMAIL: "keyed@example.com"
    }
    await gitIn(
      dir,
      ["-c", "user.signingkey=keyed@example.com", "commit", "-q", "-S", "--allow-empty", "-m", "mine"],
      me
    )
    await gitIn(dir, ["push", "-q", "origin", "HEAD:refs/heads/mine"])
    const sha = await gitIn(dir, ["rev-parse", "HEAD"])
    const detail = await gitCommit("keyed/app", sha.trim())
    expect(detail.commit.verification).toMatchObject({
      verified: true,
      reason: expect.stringMatching(/^keyed \/ [0-9A-F]{16}$/),
      signer: { name: "keyed", email: "keyed@example.com", username: "keyed" }
    })
    // Someone else's address on the same key's signature is not theirs.
    await gitIn(dir, ["-c", "user.signingkey=keyed@example.com", "commit", "-q", "-S", "--allow-empty", "-m", "x"], {
      ...me,
      GIT_COMMITTER_EMAIL: "plain@example.com"
    })
    await gitIn(dir, ["push", "-q", "origin", "HEAD:refs/heads/mine"])
    const other = await gitCommit("keyed/app", (await gitIn(dir, ["rev-parse", "HEAD"])).trim())
    expect(other.commit.verification).toMatchObject({ verified: false, reason: "gpg.error.no_gpg_keys_found" })
  })
})

describe("commits signed by a user's registered SSH key", () => {
  it.each(["ed25519", "rsa"])("are verified as the user's (%s), by the key's fingerprint", async (type) => {
    const file = join(work, `id_${type}`)
    execFileSync("ssh-keygen", ["-q", "-t", type, "-N", "", "-C", "keyed", "-f", file])
    const line = execFileSync("ssh-keygen", ["-y", "-f", file]).toString().trim()
    const fingerprint = execFileSync("ssh-keygen", ["-l", "-f", `${file}.pub`])
      .toString()
      .split(" ")[1]
    await must(await request(hearth, "POST", "/user/keys", keyed(), { title: type, key: line }), 201)
    const remote = new URL(`${hearth.base}/keyed/app.git`)
    remote.username = "keyed"
    remote.password = "password123"
    const dir = mkdtempSync(join(work, "push-"))
    await gitIn(work, ["clone", "-q", remote.toString(), dir])
    const signed = ["-c", "gpg.format=ssh", "-c", `user.signingkey=${file}`, "commit", "-q", "-S", "--allow-empty"]
    const me = { GIT_COMMITTER_NAME: "keyed", GIT_COMMITTER_EMAIL: "keyed@example.com" }
    await gitIn(dir, [...signed, "-m", "mine"], me)
    await gitIn(dir, ["push", "-q", "origin", `HEAD:refs/heads/ssh-${type}`])
    const detail = await gitCommit("keyed/app", (await gitIn(dir, ["rev-parse", "HEAD"])).trim())
    expect(detail.commit.verification).toMatchObject({
      verified: true,
      reason: `keyed / ${fingerprint}`,
      signer: { name: "keyed", email: "keyed@example.com", username: "keyed" }
    })
    // The same key over a committer who is someone else: no known key.
    await gitIn(dir, [...signed, "-m", "not mine"], { ...me, GIT_COMMITTER_EMAIL: "plain@example.com" })
    await gitIn(dir, ["push", "-q", "origin", `HEAD:refs/heads/ssh-${type}`])
    const other = await gitCommit("keyed/app", (await gitIn(dir, ["rev-parse", "HEAD"])).trim())
    expect(other.commit.verification).toMatchObject({ verified: false, reason: "gpg.error.no_gpg_keys_found" })
  })
})

describe("rule words", () => {
  it("refuses an unknown word at start, naming the setting", () => {
    expect(() => resolveSettings({ "repository.signing": { CRUD_ACTIONS: "pubkey, twofactor" } })).toThrow(
      'invalid setting [repository.signing] CRUD_ACTIONS = "pubkey, twofactor": "twofactor" is not a signing rule; expected a comma-separated list of never, always, pubkey, twofa, parentsigned, basesigned, headsigned, commitssigned, approved'
    )
    expect(() => resolveSettings({ "repository.signing": { MERGES: " Always , approved" } })).not.toThrow()
  })
})
