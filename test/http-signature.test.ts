// HTTP-signature authentication (issue 5 item 7; Forgejo's services/auth `HTTPSign`):
// requests signed as Forgejo's clients sign them (hs2019, (request-target) (created) (expires)),
// with a registered ed25519 or RSA key, or with an SSH certificate from a trusted CA naming a
// registered principal. A bad signature is 401 and never falls through to another identity.
import { execFileSync } from "node:child_process"
import { createPrivateKey, sign as cryptoSign } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import sshpk from "sshpk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KeysService } from "../src/keys/Service.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const dir = mkdtempSync(join(tmpdir(), "hearth-httpsig-"))
let n = 0
const keygen = (type: string, bits?: number) => {
  const file = join(dir, `k${++n}`)
  execFileSync("ssh-keygen", [
    "-q",
    "-t",
    type,
    ...(bits ? ["-b", String(bits)] : []),
    "-N",
    "",
    "-C",
    `k${n}`,
    "-f",
    file
  ])
  const pub = readFileSync(`${file}.pub`, "utf8").trim()
  const fingerprint = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", `${file}.pub`], {
    encoding: "utf8"
  }).split(" ")[1]!
  const parsed = sshpk.parsePrivateKey(readFileSync(file, "utf8"), "ssh")
  // sshpk's PKCS#8 of an ed25519 key whose seed starts with a zero byte (1 key in 256) is one
  // OpenSSL refuses: ed25519 keys go over as a JWK, from the seed and the public point.
  const part = (name: string) => parsed.parts.find((p) => p.name === name)!.data
  const privateKey =
    type === "ed25519"
      ? createPrivateKey({
          key: {
            kty: "OKP",
            crv: "Ed25519",
            d: part("k").subarray(0, 32).toString("base64url"),
            x: part("A").toString("base64url")
          },
          format: "jwk"
        })
      : createPrivateKey(parsed.toString("pkcs8"))
  return { file, pub, fingerprint, privateKey, type }
}
type Key = ReturnType<typeof keygen>

/** A user certificate for `key`, signed by `ca`, with these principals; the header value. */
const certify = (ca: Key, key: Key, principals: string) => {
  execFileSync("ssh-keygen", ["-q", "-s", ca.file, "-I", "test", "-n", principals, "-V", "-5m:+1h", `${key.file}.pub`])
  return readFileSync(`${key.file}-cert.pub`, "utf8").trim().split(" ")[1]!.replace(/=+$/, "")
}

interface SignOptions {
  readonly method?: string
  readonly path?: string
  readonly signedPath?: string
  readonly created?: number
  readonly expires?: number
  readonly headers?: ReadonlyArray<string>
  readonly algorithm?: string
  readonly keyId?: string
  readonly certificate?: string
  readonly extra?: Record<string, string>
  readonly body?: unknown
}

/** Sends a request signed as Forgejo's client signs (42wim/httpsig with an SSH signer). */
const signed = (key: Key, options: SignOptions = {}) => {
  const method = options.method ?? "GET"
  const path = options.path ?? "/api/v1/user"
  const now = Math.floor(Date.now() / 1000)
  const created = options.created ?? now
  const expires = options.expires ?? created + 10
  const covered = options.headers ?? [
    "(request-target)",
    "(created)",
    "(expires)",
    ...(options.certificate ? ["x-ssh-certificate"] : [])
  ]
  const lines = covered.map((h) =>
    h === "(request-target)"
      ? `(request-target): ${method.toLowerCase()} ${options.signedPath ?? path}`
      : h === "(created)"
        ? `(created): ${created}`
        : h === "(expires)"
          ? `(expires): ${expires}`
          : `${h}: ${options.certificate}`
  )
  const data = Buffer.from(lines.join("\n"))
  const signature = cryptoSign(key.type === "ed25519" ? null : "sha256", data, key.privateKey).toString("base64")
  const header =
    `keyId="${options.keyId ?? key.fingerprint}",algorithm="${options.algorithm ?? "hs2019"}",created=${created},` +
    `expires=${expires},headers="${covered.join(" ")}",signature="${signature}"`
  return fetch(`${hearth.base}${path}`, {
    method,
    headers: {
      signature: header,
      ...(options.certificate ? { "x-ssh-certificate": options.certificate } : {}),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
      ...options.extra
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
}

let alice: Key
let rsa: Key
let ca: Key
beforeAll(async () => {
  ca = keygen("ed25519")
  hearth = await startHearth({ ssh: { TRUSTED_USER_CA_KEYS: ca.pub } })
  for (const username of ["alice", "bob"]) await createUser(hearth, { username })
  alice = keygen("ed25519")
  rsa = keygen("rsa", 3072)
  for (const [title, key] of [
    ["ed", alice],
    ["rsa", rsa]
  ] as const) {
    expect((await request(hearth, "POST", "/user/keys", basic("alice"), { title, key: key.pub })).status).toBe(201)
  }
  await hearth.run(
    Effect.gen(function* () {
      const users = yield* UsersService
      const keys = yield* KeysService
      yield* keys.addPrincipal(yield* users.get("alice"), "alice-principal")
    })
  )
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("signed with a registered key", () => {
  it("authenticates an ed25519 signature in Forgejo's exact format", async () => {
    const res = await signed(alice)
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "User")
    expect(body.login).toBe("alice")
  })

  it("authenticates RSA signatures, hs2019 or an explicit algorithm, and a query string", async () => {
    expect((await json(await signed(rsa))).login).toBe("alice")
    expect((await signed(rsa, { algorithm: "rsa-sha256" })).status).toBe(200)
    const listed = await signed(alice, { path: "/api/v1/user/keys?limit=1" })
    expect(listed.status).toBe(200)
    expect(await json(listed)).toHaveLength(1)
  })

  it("acts as a token: routes that need the account's password refuse it", async () => {
    const res = await signed(alice, {
      method: "POST",
      path: "/api/v1/users/alice/tokens",
      body: { name: "t", scopes: ["all"] }
    })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("auth method not allowed")
  })

  it("refuses what does not verify with 401 and a reason", async () => {
    const now = Math.floor(Date.now() / 1000)
    const cases: Array<[string, Promise<Response>, string]> = [
      ["path changed", signed(alice, { signedPath: "/api/v1/users/bob" }), "does not match the key"],
      ["expired", signed(alice, { created: now - 100, expires: now - 60 }), "expired"],
      ["from the future", signed(alice, { created: now + 120, expires: now + 130 }), "future"],
      ["too long", signed(alice, { created: now, expires: now + 3600 }), "at most 300 seconds"],
      ["not covering expires", signed(alice, { headers: ["(request-target)", "(created)"] }), "must cover (expires)"],
      ["unknown key", signed(keygen("ed25519")), "no user key has the fingerprint"],
      ["another key's id", signed(alice, { keyId: rsa.fingerprint }), "does not match the key"],
      ["wrong algorithm", signed(alice, { algorithm: "rsa-sha256" }), "does not match the key"]
    ]
    for (const [what, pending, message] of cases) {
      const res = await pending
      expect(res.status, what).toBe(401)
      expect((await json(res)).message, what).toContain(message)
    }
    const garbled = await fetch(hearth.api("/user"), { headers: { signature: 'keyId="x",nonsense' } })
    expect(garbled.status).toBe(401)
  })

  it("never falls through to Basic credentials sent alongside a bad signature", async () => {
    const res = await signed(alice, { signedPath: "/api/v1/other", extra: { authorization: basic("bob") } })
    expect(res.status).toBe(401)
    // Basic alone works for bob.
    expect((await json(await request(hearth, "GET", "/user", basic("bob")))).login).toBe("bob")
  })

  it("refuses ECDSA keys (Forgejo signs with ed25519 or RSA) and keys that were deleted", async () => {
    const ecdsa = keygen("ecdsa", 256)
    const added = await json(await request(hearth, "POST", "/user/keys", basic("bob"), { title: "ec", key: ecdsa.pub }))
    const refused = await signed(ecdsa)
    expect(refused.status).toBe(401)
    expect((await json(refused)).message).toContain("ecdsa keys cannot sign requests")
    const temp = keygen("ed25519")
    const created = await json(
      await request(hearth, "POST", "/user/keys", basic("bob"), { title: "temp", key: temp.pub })
    )
    expect((await json(await signed(temp))).login).toBe("bob")
    expect((await request(hearth, "DELETE", `/user/keys/${created.id}`, basic("bob"))).status).toBe(204)
    expect((await signed(temp)).status).toBe(401)
    expect(added.id).toBeGreaterThan(0)
  })

  it("checks the account's state as for any credential", async () => {
    await createUser(hearth, { username: "root", isAdmin: true })
    await createUser(hearth, { username: "gone" })
    const key = keygen("ed25519")
    expect((await request(hearth, "POST", "/user/keys", basic("gone"), { title: "k", key: key.pub })).status).toBe(201)
    expect(
      (
        await request(hearth, "PATCH", "/admin/users/gone", basic("root"), {
          login_name: "gone",
          source_id: 0,
          prohibit_login: true
        })
      ).status
    ).toBe(200)
    expect((await signed(key)).status).toBe(403)
  })
})

describe("signed with an SSH certificate", () => {
  it("authenticates the user who registered a principal the trusted CA's certificate names", async () => {
    const key = keygen("ed25519")
    const certificate = certify(ca, key, "someone-else,alice-principal")
    const res = await signed(key, { certificate, keyId: "gitea" })
    expect(res.status).toBe(200)
    expect((await json(res)).login).toBe("alice")
  })

  it("refuses an untrusted CA, an unregistered principal, an uncovered certificate and a wrong key", async () => {
    const untrusted = keygen("ed25519")
    const k1 = keygen("ed25519")
    const c1 = certify(untrusted, k1, "alice-principal")
    const r1 = await signed(k1, { certificate: c1 })
    expect(r1.status).toBe(401)
    expect((await json(r1)).message).toContain("not issued by a trusted CA")
    const k2 = keygen("ed25519")
    const r2 = await signed(k2, { certificate: certify(ca, k2, "nobody") })
    expect(r2.status).toBe(401)
    expect((await json(r2)).message).toContain("no user registered")
    const k3 = keygen("ed25519")
    const c3 = certify(ca, k3, "alice-principal")
    const r3 = await signed(k3, { certificate: c3, headers: ["(request-target)", "(created)", "(expires)"] })
    expect(r3.status).toBe(401)
    expect((await json(r3)).message).toContain("must cover x-ssh-certificate")
    // Signed by another key than the certificate's.
    const r4 = await signed(keygen("ed25519"), { certificate: c3 })
    expect(r4.status).toBe(401)
    expect((await json(r4)).message).toContain("does not match the certificate's key")
  })

  it("keeps principals unique on the instance", async () => {
    const outcome = await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        const keys = yield* KeysService
        return yield* Effect.result(keys.addPrincipal(yield* users.get("bob"), "alice-principal"))
      })
    )
    expect(outcome._tag).toBe("Failure")
  })
})
