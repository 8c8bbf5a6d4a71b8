// The instance's commit signing ([repository.signing], issue 23 item 5): with SIGNING_KEY =
// default Hearth makes its OpenPGP key once, serves the public key, and signs the commits it makes
// itself (initial commit, contents API, diffpatch); real git verifies them with the served key.
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let gnupg: string
let publicKey = ""

const alice = () => basic("alice")

beforeAll(async () => {
  hearth = await startHearth({
    // CRUD_ACTIONS and MERGES always: the conditions of the defaults are test/signing-rules.test.ts's.
    "repository.signing": {
      SIGNING_KEY: "default",
      SIGNING_NAME: "Forge Signer",
      SIGNING_EMAIL: "signer@example.com",
      CRUD_ACTIONS: "always",
      MERGES: "always"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-signing-"))
  gnupg = join(work, "gnupg")
  mkdirSync(gnupg, { mode: 0o700 })
  await createUser(hearth, { username: "alice" })
  const res = await request(hearth, "POST", "/user/repos", alice(), {
    name: "signed",
    auto_init: true,
    readme: "Default"
  })
  expect(res.status).toBe(201)
  publicKey = await (await request(hearth, "GET", "/signing-key.gpg")).text()
  // The verifier knows only what the forge serves.
  execFileSync("gpg", ["--batch", "--import"], { input: publicKey, env: { ...process.env, GNUPGHOME: gnupg } })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

/** A fresh clone of alice/signed, and `git verify-commit` of a revision in it with the served key. */
const verify = async (revision: string) => {
  const dir = mkdtempSync(join(work, "clone-"))
  await gitIn(work, ["clone", "-q", `${hearth.base}/alice/signed.git`, dir])
  await gitIn(dir, ["fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*"])
  return gitRun(dir, ["verify-commit", "--raw", revision], { GNUPGHOME: gnupg })
}

describe("[repository.signing] SIGNING_KEY = default, FORMAT = openpgp", () => {
  it("serves the instance's public key, and no SSH key", async () => {
    expect(publicKey).toMatch(/^-----BEGIN PGP PUBLIC KEY BLOCK-----/)
    const repoKey = await request(hearth, "GET", "/repos/alice/signed/signing-key.gpg")
    expect(repoKey.headers.get("content-type")).toMatch(/^text\/plain/)
    expect(await repoKey.text()).toBe(publicKey)
    expect((await request(hearth, "GET", "/signing-key.ssh")).status).toBe(404)
    const listed = execFileSync("gpg", ["--batch", "--list-keys", "--with-colons"], {
      env: { ...process.env, GNUPGHOME: gnupg }
    }).toString()
    expect(listed).toContain("Forge Signer <signer@example.com>")
  })

  it("signs the initial commit (INITIAL_COMMIT = always)", async () => {
    const outcome = await verify("origin/main")
    expect(outcome.code, outcome.stderr).toBe(0)
    expect(outcome.stderr).toContain("GOODSIG")
  })

  it("signs a contents API commit and reports it as the instance's", async () => {
    const res = await request(hearth, "POST", "/repos/alice/signed/contents/hello.txt", alice(), {
      content: Buffer.from("hi\n").toString("base64"),
      message: "add hello"
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(body.verification).toMatchObject({
      verified: true,
      signer: { name: "Forge Signer", email: "signer@example.com" }
    })
    expect(body.verification.signature).toMatch(/^-----BEGIN PGP SIGNATURE-----/)
    // Author and committer stay the caller's.
    expect(body.commit.author.name).toBe("alice")
    const outcome = await verify(body.commit.sha)
    expect(outcome.code, outcome.stderr).toBe(0)
    expect(outcome.stderr).toContain("GOODSIG")
  })

  it("signs a diffpatch commit", async () => {
    const res = await request(hearth, "POST", "/repos/alice/signed/diffpatch", alice(), {
      content: "diff --git a/hello.txt b/hello.txt\n--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-hi\n+hello\n",
      sha: "x"
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.verification.verified).toBe(true)
    const outcome = await verify(body.commit.sha)
    expect(outcome.code, outcome.stderr).toBe(0)
  })

  it("signs merge commits of pull requests (MERGES)", async () => {
    const branch = await request(hearth, "POST", "/repos/alice/signed/contents/feature.txt", alice(), {
      content: Buffer.from("f\n").toString("base64"),
      new_branch: "feature"
    })
    expect(branch.status).toBe(201)
    const pull = await request(hearth, "POST", "/repos/alice/signed/pulls", alice(), {
      head: "feature",
      base: "main",
      title: "Feature"
    })
    expect(pull.status, await pull.clone().text()).toBe(201)
    const index = (await json(pull)).number
    for (const style of ["merge"]) {
      const res = await request(hearth, "POST", `/repos/alice/signed/pulls/${index}/merge`, alice(), { Do: style })
      expect(res.status, await res.clone().text()).toBe(200)
    }
    const outcome = await verify("origin/main")
    expect(outcome.code, outcome.stderr).toBe(0)
    expect(outcome.stderr).toContain("GOODSIG")
  })

  it("does not take a signature by another key for the instance's", async () => {
    const other = join(work, "other")
    mkdirSync(other, { mode: 0o700 })
    const env = { ...process.env, GNUPGHOME: other }
    execFileSync(
      "gpg",
      ["--batch", "--passphrase", "", "--quick-gen-key", "Other <o@example.com>", "ed25519", "sign", "never"],
      {
        env
      }
    )
    const dir = mkdtempSync(join(work, "push-"))
    const remote = new URL(`${hearth.base}/alice/signed.git`)
    remote.username = "alice"
    remote.password = "password123"
    await gitIn(work, ["clone", "-q", remote.toString(), dir])
    await gitIn(dir, ["-c", "user.signingkey=o@example.com", "commit", "-q", "-S", "--allow-empty", "-m", "other"], {
      GNUPGHOME: other
    })
    await gitIn(dir, ["push", "-q", "origin", "HEAD:refs/heads/other"])
    await gitIn(dir, ["-c", "user.signingkey=o@example.com", "tag", "-s", "t-other", "-m", "other tag"], {
      GNUPGHOME: other
    })
    await gitIn(dir, ["push", "-q", "origin", "refs/tags/t-other"])
    const tagSha = await gitIn(dir, ["rev-parse", "refs/tags/t-other"])
    const tag = await json(await request(hearth, "GET", `/repos/alice/signed/git/tags/${tagSha}`))
    expect(tag.verification).toMatchObject({ verified: false, reason: "gpg.error.no_gpg_keys_found" })
  })
})
