// The instance's commit signing with FORMAT = ssh ([repository.signing], issue 23 item 5): Hearth
// makes an ed25519 key once, serves it at /signing-key.ssh, signs its API commits with it when
// the user has an SSH key registered (CRUD_ACTIONS = pubkey), and reports them as the instance's;
// real git verifies them with the served key.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sshSignedBy } from "../src/git/Signing.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string

const alice = () => basic("alice")

beforeAll(async () => {
  // INITIAL_COMMIT = never: the repository's first commit stays unsigned, API commits are signed.
  hearth = await startHearth({
    "repository.signing": { SIGNING_KEY: "default", FORMAT: "ssh", INITIAL_COMMIT: "never", CRUD_ACTIONS: "pubkey" }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-signing-ssh-"))
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  const res = await request(hearth, "POST", "/user/repos", alice(), { name: "signed", auto_init: true })
  expect(res.status).toBe(201)
  // alice has an SSH key (pubkey, FORMAT ssh); bob, a collaborator, has none.
  const file = join(work, "alice_ed25519")
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", file])
  const line = execFileSync("ssh-keygen", ["-y", "-f", file]).toString().trim()
  expect((await request(hearth, "POST", "/user/keys", alice(), { title: "laptop", key: line })).status).toBe(201)
  const added = await request(hearth, "PUT", "/repos/alice/signed/collaborators/bob", alice(), { permission: "write" })
  expect(added.status).toBe(204)
}, 120_000)

afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("[repository.signing] FORMAT = ssh, INITIAL_COMMIT = never", () => {
  it("serves the SSH key, an empty OpenPGP key, and signs API commits git verifies with it", async () => {
    const key = await (await request(hearth, "GET", "/signing-key.ssh")).text()
    expect(key).toMatch(/^ssh-ed25519 \S+ Hearth <noreply@/)
    expect(await (await request(hearth, "GET", "/signing-key.gpg")).text()).toBe("")
    const res = await request(hearth, "POST", "/repos/alice/signed/contents/a.txt", alice(), {
      content: Buffer.from("a\n").toString("base64")
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(body.verification).toMatchObject({ verified: true, signer: { name: "Hearth" } })
    // Forgejo's reason for the instance's SSH key: its name and the key's fingerprint; the commit
    // routes say the same.
    const fingerprint = execFileSync("ssh-keygen", ["-l", "-f", "-"], { input: key }).toString().split(" ")[1]
    expect(body.verification.reason).toBe(`Hearth / ${fingerprint}`)
    const detail = await json(await request(hearth, "GET", `/repos/alice/signed/git/commits/${body.commit.sha}`))
    expect(detail.commit.verification).toEqual(body.verification)
    expect(body.verification.signature).toMatch(/^-----BEGIN SSH SIGNATURE-----/)
    // The signature is over the payload, and only that payload.
    expect(sshSignedBy(key, body.verification.signature, body.verification.payload)).toBe(true)
    expect(sshSignedBy(key, body.verification.signature, `${body.verification.payload}x`)).toBe(false)
    const allowed = join(work, "allowed_signers")
    writeFileSync(allowed, `noreply@localhost ${key}`)
    const dir = mkdtempSync(join(work, "clone-"))
    await gitIn(work, ["clone", "-q", `${hearth.base}/alice/signed.git`, dir])
    const verify = (revision: string) =>
      gitRun(dir, ["-c", `gpg.ssh.allowedSignersFile=${allowed}`, "verify-commit", revision])
    const signed = await verify("HEAD")
    expect(signed.code, signed.stderr).toBe(0)
    expect(signed.stderr).toContain('Good "git" signature')
    // The initial commit, made under INITIAL_COMMIT = never.
    expect((await verify("HEAD^")).code).not.toBe(0)
    expect(await gitIn(dir, ["cat-file", "commit", "HEAD^"])).not.toContain("gpgsig")
  })

  it("does not sign the commit of a user without an SSH key (pubkey)", async () => {
    const res = await request(hearth, "POST", "/repos/alice/signed/contents/b.txt", basic("bob"), {
      content: Buffer.from("b\n").toString("base64")
    })
    expect(res.status).toBe(201)
    expect((await json(res)).verification).toMatchObject({ verified: false, reason: "gpg.error.not_signed_commit" })
  })
})
