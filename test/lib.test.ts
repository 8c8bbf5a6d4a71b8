// The shared helpers of src/lib, each on its own: no server, no database.

import { execFileSync } from "node:child_process"
import { createCipheriv, createHash, randomBytes } from "node:crypto"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { cronSchedule } from "../src/lib/CronSchedule.ts"
import { formatGoDuration, parseGoDuration } from "../src/lib/Duration.ts"
import { checkHost, type HostPolicy, hostNameRefused } from "../src/lib/HostPolicy.ts"
import {
  branchNameProblem,
  isValidRefName,
  refNameProblem,
  repoNameProblem,
  revisionProblem,
  userNameProblem
} from "../src/lib/Names.ts"
import { sealer } from "../src/lib/Sealer.ts"

describe("Go durations", () => {
  it("parses and formats as Go does", () => {
    expect(parseGoDuration("8h0m0s")).toBe(28800)
    expect(parseGoDuration("1h30m")).toBe(5400)
    expect(parseGoDuration("1.5h")).toBe(5400)
    expect(parseGoDuration("90s")).toBe(90)
    expect(parseGoDuration("0")).toBe(0)
    expect(parseGoDuration("10")).toBeUndefined()
    expect(parseGoDuration("1d")).toBeUndefined()
    expect(formatGoDuration(28800)).toBe("8h0m0s")
    expect(formatGoDuration(600)).toBe("10m0s")
    expect(formatGoDuration(5430.5)).toBe("1h30m30.5s")
  })
})

describe("ref name validation (git check-ref-format rules)", () => {
  it.each(["refs/heads/main", "refs/heads/feature/x-1", "refs/tags/v1.0", "refs/heads/a.b"])("accepts %s", (name) =>
    expect(refNameProblem(name)).toBeUndefined()
  )

  it.each([
    ["", "empty"],
    ["refs/heads/a..b", ".."],
    ["refs/heads/a\0b", "control"],
    ["refs/heads/a\tb", "control"],
    ["-refs/heads/x", "'-'"],
    ["refs/heads/a b", "' '"],
    ["refs/heads/a~1", "'~'"],
    ["refs/heads/a^", "'^'"],
    ["refs/heads/a:b", "':'"],
    ["refs/heads/a?", "'?'"],
    ["refs/heads/a*", "'*'"],
    ["refs/heads/a[", "'['"],
    ["refs/heads/a\\b", "'\\'"],
    ["refs/heads/.hidden", "start with '.'"],
    ["refs/heads/x.lock", ".lock"],
    ["refs/heads/x/", "end with '/'"],
    ["/refs/heads/x", "start or end"],
    ["refs//heads", "'//'"],
    ["refs/heads/x.", "end with '.'"],
    ["refs/heads/a@{1}", "'@{'"],
    ["@", "'@'"],
    ["main", "contain '/'"]
  ])("rejects %j (%s)", (name, why) => expect(refNameProblem(name)).toContain(why))

  it("agrees with git check-ref-format on a sample", () => {
    const sample = [
      "refs/heads/ok",
      "refs/heads/a..b",
      "refs/heads/x.lock",
      "refs/heads/.x",
      "refs/heads/a b",
      "refs/heads/a@{b",
      "refs/x/"
    ]
    for (const name of sample) {
      let gitOk = true
      try {
        execFileSync("git", ["check-ref-format", name])
      } catch {
        gitOk = false
      }
      expect(isValidRefName(name), name).toBe(gitOk)
    }
  })

  it("allows one-level names only when asked; branch names reject HEAD and leading '-'", () => {
    expect(isValidRefName("main", { allowOneLevel: true })).toBe(true)
    expect(branchNameProblem("feature/x")).toBeUndefined()
    expect(branchNameProblem("HEAD")).toBeDefined()
    expect(branchNameProblem("@")).toBeDefined()
    expect(branchNameProblem("-f")).toBeDefined()
    expect(branchNameProblem("a..b")).toBeDefined()
  })
})

describe("user, repository and revision names", () => {
  it("user and organization names as Forgejo's IsUsableUsername", () => {
    expect(userNameProblem("alice-1")).toBeUndefined()
    expect(userNameProblem("")).toBe("[UserName]: Required")
    expect(userNameProblem("a".repeat(41))).toBe("[UserName]: MaxSize (40)")
    expect(userNameProblem("a..b")).toContain("must be valid alpha or numeric")
    expect(userNameProblem("Admin")).toBe("name is reserved [name: Admin]")
    expect(userNameProblem("bob.keys")).toBe("name is reserved [name: bob.keys]")
  })

  it("repository names as Forgejo's IsUsableRepoName", () => {
    expect(repoNameProblem("my.repo_1")).toBeUndefined()
    expect(repoNameProblem("a".repeat(101))).toBe("[Name]: MaxSize (100)")
    expect(repoNameProblem("a b")).toContain("must contain only alphanumeric")
    expect(repoNameProblem("..")).toBe("name is reserved [name: ..]")
    expect(repoNameProblem("x.wiki")).toBe("name pattern is not allowed [pattern: *.wiki]")
  })

  it("revisions are never options, ranges or text with spaces", () => {
    expect(revisionProblem("main~2")).toBeUndefined()
    expect(revisionProblem("--all")).toBeDefined()
    expect(revisionProblem("a..b")).toBeDefined()
    expect(revisionProblem("a b")).toBeDefined()
  })
})

describe("the outbound host policy", () => {
  const policy = (lists: Partial<HostPolicy> = {}): HostPolicy => ({
    allowLocalNetworks: false,
    allowed: "",
    blocked: "",
    refusal: "Refused.",
    hints: { local: " (local)", lists: " (lists)" },
    ...lists
  })
  const answer = (p: HostPolicy, url: string) =>
    Effect.runPromise(Effect.match(checkHost(p, url), { onFailure: (e) => e.message, onSuccess: (a) => a.join(",") }))

  it("allows public addresses by default, local ones only with the switch, with each feature's words", async () => {
    expect(await answer(policy(), "https://93.184.216.34/x")).toBe("93.184.216.34")
    expect(await answer(policy(), "http://127.0.0.1:3000/x")).toBe("Refused. (local)")
    expect(await answer(policy(), "http://[::ffff:10.0.0.1]/x")).toBe("Refused. (local)")
    expect(await answer(policy({ allowLocalNetworks: true }), "http://127.0.0.1:3000/x")).toBe("127.0.0.1")
    // Link-local (cloud metadata) is never allowed by the switch.
    expect(await answer(policy({ allowLocalNetworks: true }), "http://169.254.169.254/")).toBe("Refused. (lists)")
  })

  it("the blocked list wins, by CIDR or builtin; an allowed list replaces the default", async () => {
    expect(await answer(policy({ blocked: "93.184.0.0/16" }), "https://93.184.216.34/")).toBe("Refused.")
    expect(await answer(policy({ allowLocalNetworks: true, blocked: "loopback" }), "http://127.0.0.1/")).toBe(
      "Refused."
    )
    expect(await answer(policy({ allowed: "10.0.0.0/8" }), "http://10.1.2.3/")).toBe("10.1.2.3")
    expect(await answer(policy({ allowed: "10.0.0.0/8" }), "https://93.184.216.34/")).toBe("Refused.")
  })

  it("refuses a host by its name alone when the lists say so", () => {
    expect(hostNameRefused({ allowed: "", blocked: "*.evil.example" }, "a.evil.example:443")).toBe(true)
    expect(hostNameRefused({ allowed: "good.example", blocked: "" }, "other.example")).toBe(true)
    expect(hostNameRefused({ allowed: "good.example", blocked: "" }, "GOOD.example")).toBe(false)
    // An allowed list with addresses or builtins needs the addresses: not decided by the name.
    expect(hostNameRefused({ allowed: "good.example, private", blocked: "" }, "other.example")).toBe(false)
  })
})

describe("sealed secrets", () => {
  it("round-trips, keeps empty values empty, and a purpose's key never opens another's values", () => {
    const mirrors = sealer("secret", "mirror-credentials")
    const sealed = mirrors.seal("Authorization: Basic eDp5")
    expect(sealed).not.toContain("eDp5")
    expect(mirrors.open(sealed)).toBe("Authorization: Basic eDp5")
    expect(mirrors.seal("")).toBe("")
    expect(mirrors.open("")).toBe("")
    expect(() => sealer("secret", "totp").open(sealed)).toThrow()
    expect(() => sealer("other", "mirror-credentials").open(sealed)).toThrow()
  })

  it("opens TOTP secrets sealed by the former copy in src/twofa (same key derivation and format)", () => {
    // The former src/twofa/Service.ts `seal`, verbatim: key sha256("totp:" + SECRET_KEY).
    const key = createHash("sha256").update("totp:secret").digest()
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", key, iv)
    const data = Buffer.concat([cipher.update("JBSWY3DPEHPK3PXP", "utf8"), cipher.final()])
    const stored = [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64")).join(".")
    expect(sealer("secret", "totp").open(stored)).toBe("JBSWY3DPEHPK3PXP")
  })
})

describe("cronSchedule (Forgejo's [cron.*] SCHEDULE)", () => {
  it("reads @every, the descriptors and cron expressions; the delay is to the next run", () => {
    const now = new Date(2026, 0, 5, 10, 30, 0)
    expect(cronSchedule("@every 90s")!(now)).toBe(90_000)
    expect(cronSchedule("@every 1h30m")!(now)).toBe(5_400_000)
    expect(cronSchedule("@hourly")!(now)).toBe(30 * 60_000)
    expect(cronSchedule("@midnight")!(now)).toBe(13.5 * 3_600_000)
    expect(cronSchedule("@daily")!(now)).toBe(13.5 * 3_600_000)
    expect(cronSchedule("0 11 * * *")!(now)).toBe(30 * 60_000)
    expect(cronSchedule("*/10 * * * * *")!(now)).toBe(10_000)
  })

  it("refuses what is not a schedule", () => {
    for (const bad of ["", "sometimes", "@every", "@every 0s", "@every 5", "@fortnightly", "61 * * * *"])
      expect(cronSchedule(bad), bad).toBeUndefined()
  })
})
