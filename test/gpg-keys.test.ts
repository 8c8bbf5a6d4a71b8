// GPG keys (issue 5 item 5; Forgejo's routers/api/v1/user/gpg_key.go): key ids, packets, subkeys, capabilities and times as
// Forgejo shows them; a key is added through an activated address of its owner or a signature
// over the verification token; bad armour, private keys and duplicates refused with nothing
// stored; the `{user}.gpg` export. Keys are generated here with openpgp.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import * as openpgp from "openpgp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verificationToken } from "../src/gpg/Service.ts"
import { type UserRow, UsersRepo } from "../src/users/Repo.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth({ log: { LEVEL: "None" } })
  for (const username of ["alice", "bob", "carol", "dave", "erin", "frank"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "hidden", visibility: "private" })
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)
const ZERO = "0001-01-01T00:00:00Z"

interface TestKey {
  readonly privateKey: openpgp.PrivateKey
  readonly publicArmored: string
  readonly keyId: string
  readonly subkeyId: string
}
const generate = async (
  emails: ReadonlyArray<string>,
  options: { expiresIn?: number; date?: Date } = {}
): Promise<TestKey> => {
  const { privateKey } = await openpgp.generateKey({
    type: "ecc",
    userIDs: emails.map((email) => ({ name: email.split("@")[0]!, email })),
    format: "object",
    ...(options.expiresIn === undefined ? {} : { keyExpirationTime: options.expiresIn }),
    ...(options.date === undefined ? {} : { date: options.date })
  })
  return {
    privateKey,
    publicArmored: privateKey.toPublic().armor(),
    keyId: privateKey.getKeyID().toHex().toUpperCase(),
    subkeyId: privateKey.subkeys[0]!.getKeyID().toHex().toUpperCase()
  }
}
const sign = async (key: TestKey, text: string) =>
  openpgp.sign({ message: await openpgp.createMessage({ text }), signingKeys: key.privateKey, detached: true })
const tokenOf = async (user: string) => {
  const res = await call("GET", "/user/gpg_key_token", basic(user))
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toContain("text/plain")
  return res.text()
}
const add = (user: string, body: Record<string, unknown>) => call("POST", "/user/gpg_keys", basic(user), body)
const storedKeys = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const keys = yield* sql`SELECT key_id FROM gpg_keys ORDER BY key_id`
      const imports = yield* sql`SELECT key_id FROM gpg_key_imports ORDER BY key_id`
      return { keys: keys.map((r) => r.key_id as string), imports: imports.map((r) => r.key_id as string) }
    })
  )

describe("adding", () => {
  it("adds a key whose identity is the owner's primary address, shown as Forgejo shows it", async () => {
    const created = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000)
    const key = await generate(["alice@example.com", "alice@elsewhere.example"], { date: created })
    const res = await add("alice", { armored_public_key: key.publicArmored })
    expect(res.status, await res.clone().text()).toBe(201)
    const body = await json(res)
    expectSwagger(body, "GPGKey")
    expect(body.key_id).toBe(key.keyId)
    expect(body.key_id).toMatch(/^[0-9A-F]{16}$/)
    expect(body.primary_key_id).toBe("")
    // The e-mail that is an activated address of alice's, and only that one.
    expect(body.emails).toEqual([{ email: "alice@example.com", verified: true }])
    expect(body).toMatchObject({
      can_sign: true,
      can_certify: true,
      can_encrypt_comms: false,
      can_encrypt_storage: false,
      verified: false,
      created_at: created.toISOString().replace(".000", ""),
      expires_at: ZERO
    })
    // public_key: this key's packet alone (a public-key packet, tag 6), base64.
    const packet = Buffer.from(body.public_key, "base64")
    const packets = await openpgp.PacketList.fromBinary(packet, {
      [openpgp.enums.packet.publicKey]: openpgp.PublicKeyPacket
    } as any)
    expect(packets.length).toBe(1)
    expect((packets[0] as openpgp.PublicKeyPacket).getKeyID().toHex().toUpperCase()).toBe(key.keyId)

    expect(body.subkeys).toHaveLength(1)
    const sub = body.subkeys[0]
    expect(sub).toMatchObject({
      key_id: key.subkeyId,
      primary_key_id: key.keyId,
      emails: [],
      subkeys: [],
      verified: false,
      can_sign: false,
      can_certify: false,
      can_encrypt_comms: true,
      can_encrypt_storage: true,
      expires_at: ZERO
    })
    const subPackets = await openpgp.PacketList.fromBinary(Buffer.from(sub.public_key, "base64"), {
      [openpgp.enums.packet.publicSubkey]: openpgp.PublicSubkeyPacket
    } as any)
    expect((subPackets[0] as openpgp.PublicSubkeyPacket).getKeyID().toHex().toUpperCase()).toBe(key.subkeyId)
    expect(sub.id).not.toBe(body.id)
  })

  it("shows expires_at from the self-signature", async () => {
    const key = await generate(["bob@example.com"], { expiresIn: 30 * 86400 })
    const res = await add("bob", { armored_public_key: key.publicArmored })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(Date.parse(body.expires_at) - Date.parse(body.created_at)).toBe(30 * 86400 * 1000)
    expect(Date.parse(body.subkeys[0].expires_at) - Date.parse(body.created_at)).toBe(30 * 86400 * 1000)
  })

  it("refuses a key whose addresses are not activated addresses of the caller (422 with the token), until one is", async () => {
    const before = await storedKeys()
    // An address added to carol but not activated yet does not count.
    expect((await call("POST", "/user/emails", basic("carol"), { emails: ["carol.work@example.org"] })).status).toBe(
      201
    )
    const key = await generate(["carol.work@example.org"])
    const refused = await add("carol", { armored_public_key: key.publicArmored })
    expect(refused.status).toBe(422)
    const message = (await json(refused)).message as string
    expect(message).toMatch(/^None of the emails attached to the GPG key could be found\. .*token: [0-9a-f]{64}$/)
    expect(message.endsWith(await tokenOf("carol"))).toBe(true)
    // Someone else's address does not count either.
    const foreign = await generate(["alice@example.com"])
    expect((await add("carol", { armored_public_key: foreign.publicArmored })).status).toBe(422)
    expect(await storedKeys()).toEqual(before)

    // Activated (here directly, as the activation route would).
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE email_addresses SET is_activated = true WHERE lower_email = 'carol.work@example.org'`
      })
    )
    const ok = await add("carol", { armored_public_key: key.publicArmored })
    expect(ok.status).toBe(201)
    expect((await json(ok)).emails).toEqual([{ email: "carol.work@example.org", verified: true }])
  })

  it("adds any key with a valid signature over the verification token, marked verified; refuses bad signatures", async () => {
    const key = await generate(["somebody@unknown.example"])
    const token = await tokenOf("dave")
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    const other = await generate(["other@unknown.example"])
    const before = await storedKeys()
    for (const signature of [
      await sign(other, token), // another key's signature
      await sign(key, `${token}x`), // over other text
      "-----BEGIN PGP SIGNATURE-----\n\nnonsense\n-----END PGP SIGNATURE-----",
      "not a signature"
    ]) {
      const res = await add("dave", { armored_public_key: key.publicArmored, armored_signature: signature })
      expect(res.status).toBe(422)
      expect((await json(res)).message).toContain("do not match or token is out of date")
    }
    expect(await storedKeys()).toEqual(before)

    const res = await add("dave", { armored_public_key: key.publicArmored, armored_signature: await sign(key, token) })
    expect(res.status, await res.clone().text()).toBe(201)
    const body = await json(res)
    expectSwagger(body, "GPGKey")
    expect(body).toMatchObject({ key_id: key.keyId, verified: true, emails: [] })
  })

  it("accepts a binary signature over the token followed by a newline (as `echo token | gpg -b` makes)", async () => {
    const key = await generate(["newline@unknown.example"])
    const token = await tokenOf("dave")
    const signature = await openpgp.sign({
      message: await openpgp.createMessage({ binary: new TextEncoder().encode(`${token}\n`) }),
      signingKeys: key.privateKey,
      detached: true
    })
    const res = await add("dave", { armored_public_key: key.publicArmored, armored_signature: signature })
    expect(res.status, await res.clone().text()).toBe(201)
  })

  it("keeps a token good for the minute it is shown and the next one, not longer", () => {
    const user = {
      id: 7,
      name: "zed",
      email: "zed@example.com",
      createdAt: new Date("2026-01-02T03:04:05Z")
    } as UserRow
    const at = Date.parse("2026-11-22T10:20:30Z")
    const shown = verificationToken(user, 1, at)
    expect(shown).toMatch(/^[0-9a-f]{64}$/)
    // A minute later it is the "previous" token, still accepted; two minutes later it is neither.
    expect(verificationToken(user, 0, at + 60_000)).toBe(shown)
    expect(verificationToken(user, 1, at + 120_000)).not.toBe(shown)
    expect(verificationToken(user, 0, at + 120_000)).not.toBe(shown)
    // Bound to the account.
    expect(verificationToken({ ...user, email: "other@example.com" }, 1, at)).not.toBe(shown)
  })

  it("with a signature, adds only the signing key of several", async () => {
    const signer = await generate(["one@unknown.example"])
    const bystander = await generate(["two@unknown.example"])
    const token = await tokenOf("erin")
    const res = await add("erin", {
      armored_public_key: `${bystander.publicArmored}\n${signer.publicArmored}`,
      armored_signature: await sign(signer, token)
    })
    expect(res.status).toBe(201)
    expect((await json(res)).key_id).toBe(signer.keyId)
    const { keys } = await storedKeys()
    expect(keys).toContain(signer.keyId)
    expect(keys).not.toContain(bystander.keyId)
  })

  it("refuses invalid armour, private keys and duplicate key ids (422), storing nothing", async () => {
    const key = await generate(["frank@example.com"])
    expect((await add("frank", { armored_public_key: key.publicArmored })).status).toBe(201)
    const before = await storedKeys()
    const cases: Array<[string, string]> = [
      ["invalid_key", "failed to parse gpg key"],
      ["-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nAAAA\n-----END PGP PUBLIC KEY BLOCK-----", "failed to parse gpg key"],
      [key.privateKey.armor(), "private key"],
      [key.publicArmored, "A key with the same id already exists"]
    ]
    for (const [armored, message] of cases) {
      const res = await add("frank", { armored_public_key: armored })
      expect(res.status, message).toBe(422)
      expect((await json(res)).message).toContain(message)
    }
    // The same key for someone else: still a duplicate.
    const stolen = await add("alice", {
      armored_public_key: key.publicArmored,
      armored_signature: await sign(key, await tokenOf("alice"))
    })
    expect(stolen.status).toBe(422)
    expect((await json(stolen)).message).toBe("A key with the same id already exists")
    expect((await add("frank", {})).status).toBe(422)
    expect(await storedKeys()).toEqual(before)
  })
})

describe("reading, verifying, deleting", () => {
  it("lists primary keys with nested subkeys and X-Total-Count, for the owner and for others", async () => {
    const second = await generate(["bob@example.com"])
    expect((await add("bob", { armored_public_key: second.publicArmored })).status).toBe(201)
    const res = await call("GET", "/user/gpg_keys", basic("bob"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    const keys = await json(res)
    expectSwagger(keys, "GPGKey[]")
    expect(keys).toHaveLength(2)
    for (const key of keys) {
      expect(key.primary_key_id).toBe("")
      expect(key.subkeys).toHaveLength(1)
    }
    const seen = await call("GET", "/users/bob/gpg_keys", basic("alice"))
    expect(seen.status).toBe(200)
    expect(await json(seen)).toEqual(keys)
    const page = await call("GET", "/users/bob/gpg_keys?limit=1&page=2", basic("alice"))
    expect((await json(page)).map((k: any) => k.key_id)).toEqual([keys[1].key_id])
    expect(page.headers.get("x-total-count")).toBe("2")

    expect((await call("GET", "/users/nobody/gpg_keys", basic("alice"))).status).toBe(404)
    expect((await call("GET", "/users/hidden/gpg_keys", basic("alice"))).status).toBe(404)
    expect((await call("GET", "/user/gpg_keys")).status).toBe(401)
    expect((await call("GET", "/users/bob/gpg_keys")).status).toBe(401)
    const repoOnly = await createToken(hearth, "alice", ["write:repository"])
    expect((await call("GET", "/users/bob/gpg_keys", `token ${repoOnly}`)).status).toBe(403)
    const reader = await createToken(hearth, "alice", ["read:user"])
    expect((await call("GET", "/users/bob/gpg_keys", `token ${reader}`)).status).toBe(200)
    expect(
      (await call("POST", "/user/gpg_keys", `token ${reader}`, { armored_public_key: second.publicArmored })).status
    ).toBe(403)
  })

  it("hides the e-mails of a key from others when its owner keeps e-mail private", async () => {
    await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        const repo = yield* UsersRepo
        const bob = yield* repo.findByName("bob")
        if (bob._tag === "Some") yield* users.update(bob.value, { keep_email_private: true })
      })
    )
    const others = await json(await call("GET", "/users/bob/gpg_keys", basic("alice")))
    for (const key of others) expect(key.emails).toEqual([])
    const own = await json(await call("GET", "/user/gpg_keys", basic("bob")))
    for (const key of own) expect(key.emails).toEqual([{ email: "bob@example.com", verified: true }])
  })

  it("gets the caller's own keys and subkeys by id; anything else is 404", async () => {
    const [key] = await json(await call("GET", "/user/gpg_keys", basic("alice")))
    const res = await call("GET", `/user/gpg_keys/${key.id}`, basic("alice"))
    expect(res.status).toBe(200)
    const got = await json(res)
    expectSwagger(got, "GPGKey")
    expect(got).toEqual(key)
    const sub = await json(await call("GET", `/user/gpg_keys/${key.subkeys[0].id}`, basic("alice")))
    expect(sub).toEqual(key.subkeys[0])
    for (const [user, id] of [
      ["bob", key.id],
      ["alice", 999999],
      ["alice", "abc"]
    ] as const) {
      const denied = await call("GET", `/user/gpg_keys/${id}`, basic(user))
      expect(denied.status).toBe(404)
      expect(await denied.text()).toBe("")
    }
  })

  it("verifies an added key with a signature over the token (201), by key id with or without leading zeros", async () => {
    const [key] = await json(await call("GET", "/user/gpg_keys", basic("frank")))
    expect(key.verified).toBe(false)
    const generated = await generate(["x@unknown.example"])
    const token = await tokenOf("frank")
    const wrong = await call("POST", "/user/gpg_key_verify", basic("frank"), {
      key_id: key.key_id,
      armored_signature: await sign(generated, token)
    })
    expect(wrong.status).toBe(422)
    expect(
      (
        await call("POST", "/user/gpg_key_verify", basic("frank"), {
          key_id: "00000000000000AB",
          armored_signature: "x"
        })
      ).status
    ).toBe(404)
    expect(
      (await call("POST", "/user/gpg_key_verify", basic("frank"), { key_id: "0000", armored_signature: "x" })).status
    ).toBe(404)
    // Another user's key is not the caller's to verify.
    const [alices] = await json(await call("GET", "/user/gpg_keys", basic("alice")))
    expect(
      (await call("POST", "/user/gpg_key_verify", basic("frank"), { key_id: alices.key_id, armored_signature: "x" }))
        .status
    ).toBe(404)
    expect((await json(await call("GET", "/user/gpg_keys", basic("frank"))))[0].verified).toBe(false)
  })

  it("deletes the caller's key with its subkeys (204); another's is 403, unknown 404, a subkey id 422", async () => {
    const [key] = await json(await call("GET", "/user/gpg_keys", basic("alice")))
    const before = await storedKeys()
    const forbidden = await call("DELETE", `/user/gpg_keys/${key.id}`, basic("bob"))
    expect(forbidden.status).toBe(403)
    expect((await json(forbidden)).message).toBe("You do not have access to this key")
    expect((await call("DELETE", "/user/gpg_keys/999999", basic("alice"))).status).toBe(404)
    const sub = await call("DELETE", `/user/gpg_keys/${key.subkeys[0].id}`, basic("alice"))
    expect(sub.status).toBe(422)
    expect((await json(sub)).message).toContain("is a subkey of")
    expect(await storedKeys()).toEqual(before)

    const res = await call("DELETE", `/user/gpg_keys/${key.id}`, basic("alice"))
    expect(res.status).toBe(204)
    const after = await storedKeys()
    expect(after.keys).not.toContain(key.key_id)
    expect(after.keys).not.toContain(key.subkeys[0].key_id)
    expect(after.imports).not.toContain(key.key_id)
    expect((await call("GET", `/user/gpg_keys/${key.id}`, basic("alice"))).status).toBe(404)
  })
})

describe("verification of a key added by address", () => {
  it("marks it verified with a signature over the token", async () => {
    const key = await generate(["erin@example.com"])
    expect((await add("erin", { armored_public_key: key.publicArmored })).status).toBe(201)
    const token = await tokenOf("erin")
    const res = await call("POST", "/user/gpg_key_verify", basic("erin"), {
      // Leading zeros are ignored (Forgejo), and case does not matter.
      key_id: `00${key.keyId}`.toLowerCase(),
      armored_signature: await sign(key, token)
    })
    expect(res.status, await res.clone().text()).toBe(201)
    const body = await json(res)
    expectSwagger(body, "GPGKey")
    expect(body).toMatchObject({
      key_id: key.keyId,
      verified: true,
      emails: [{ email: "erin@example.com", verified: true }]
    })
    const listed = (await json(await call("GET", "/user/gpg_keys", basic("erin")))).find(
      (k: any) => k.key_id === key.keyId
    )
    expect(listed.verified).toBe(true)
  })
})

describe("armored export at {ROOT_URL}{user}.gpg", () => {
  it("serves the user's keys as one armored block", async () => {
    const res = await fetch(`${hearth.base}/bob.gpg`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/plain")
    const text = await res.text()
    expect(text).toMatch(/^-----BEGIN PGP PUBLIC KEY BLOCK-----/)
    const keys = await openpgp.readKeys({ armoredKeys: text })
    const listed = await json(await call("GET", "/user/gpg_keys", basic("bob")))
    expect(keys.map((k) => k.getKeyID().toHex().toUpperCase()).sort()).toEqual(listed.map((k: any) => k.key_id).sort())
    expect(keys.every((k) => !k.isPrivate())).toBe(true)
  })

  it("answers an empty block with a note for a user without keys, and 404 for unknown or hidden users", async () => {
    await createUser(hearth, { username: "keyless" })
    const res = await fetch(`${hearth.base}/keyless.gpg`)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain("This user hasn't uploaded any GPG keys.")
    // Names may hold dots.
    await createUser(hearth, { username: "dot.ted" })
    expect((await fetch(`${hearth.base}/dot.ted.gpg`)).status).toBe(200)
    expect((await fetch(`${hearth.base}/nobody.gpg`)).status).toBe(404)
    expect((await fetch(`${hearth.base}/hidden.gpg`)).status).toBe(404)
    expect((await fetch(`${hearth.base}/hidden.gpg`, { headers: { authorization: basic("hidden") } })).status).toBe(200)
    // Without `.gpg` the path is bob's profile page, not a key export.
    const profile = await fetch(`${hearth.base}/bob`)
    expect(profile.status).toBe(200)
    expect(profile.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await profile.text()).not.toContain("BEGIN PGP PUBLIC KEY BLOCK")
  })
})
