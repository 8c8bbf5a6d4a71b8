// The SSH host key Hearth writes on a new forge's first start (src/ssh/HostKey.ts): every key must be
// readable by ssh2 (the server) and OpenSSH. The keys whose public half starts with a zero byte (one
// in 256) are the ones ssh2's own generator wrote malformed.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import ssh2 from "ssh2"
import { afterAll, describe, expect, it } from "vitest"
import { generateEd25519 } from "../src/ssh/HostKey.ts"
import { hostKey } from "../src/ssh/Server.ts"

const work = mkdtempSync(join(tmpdir(), "hearth-hostkey-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const publicBytes = (line: string) => {
  const blob = Buffer.from(line.split(" ")[1]!, "base64")
  return blob.subarray(4 + 11 + 4) // string "ssh-ed25519", then the key's length
}

describe("the ed25519 host key", () => {
  it("is readable by ssh2 and ssh-keygen, also when its public key starts with zero bytes", () => {
    let leadingZero = 0
    let made = 0
    while (leadingZero < 2) {
      const pair = generateEd25519("hearth host key")
      made++
      const pub = publicBytes(pair.public)
      expect(pub.length).toBe(32)
      const parsed = ssh2.utils.parseKey(pair.private)
      expect(parsed).not.toBeInstanceOf(Error)
      const key = parsed as ssh2.ParsedKey
      expect(key.type).toBe("ssh-ed25519")
      expect(key.comment).toBe("hearth host key")
      // The private key signs what its public half verifies.
      const signature = key.sign(Buffer.from("hello"))
      const verifier = ssh2.utils.parseKey(pair.public) as ssh2.ParsedKey
      expect(verifier.verify(Buffer.from("hello"), signature)).toBe(true)
      if (pub[0] === 0) {
        leadingZero++
        const file = join(work, `zero${leadingZero}`)
        writeFileSync(file, pair.private, { mode: 0o600 })
        // OpenSSH derives the same public line from the private file.
        expect(execFileSync("ssh-keygen", ["-y", "-f", file], { encoding: "utf8" }).trim()).toBe(pair.public)
      }
      expect(made).toBeLessThan(20_000)
    }
  })

  it("is written once under APP_DATA_PATH/ssh (mode 0600) and reused on the next start", () => {
    const first = hostKey(work)
    const file = join(work, "ssh", "hearth_host_ed25519_key")
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(hostKey(work)).toBe(first)
    expect(readFileSync(`${file}.pub`, "utf8")).toMatch(/^ssh-ed25519 AAAA\S+ hearth host key\n$/)
    expect(execFileSync("ssh-keygen", ["-y", "-f", file], { encoding: "utf8" }).trim()).toBe(
      readFileSync(`${file}.pub`, "utf8").trim()
    )
  })
})
