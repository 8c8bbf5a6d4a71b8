// The shared helpers of src/lib, each on its own: no server, no database.
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { formatGoDuration, parseGoDuration } from "../src/lib/Duration.ts"
import { branchNameProblem, isValidRefName, refNameProblem, repoNameProblem, revisionProblem, userNameProblem } from "../src/lib/Names.ts"

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
  it.each([
    "refs/heads/main",
    "refs/heads/feature/x-1",
    "refs/tags/v1.0",
    "refs/heads/a.b"
  ])("accepts %s", (name) => expect(refNameProblem(name)).toBeUndefined())

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
    const sample = ["refs/heads/ok", "refs/heads/a..b", "refs/heads/x.lock", "refs/heads/.x", "refs/heads/a b", "refs/heads/a@{b", "refs/x/"]
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
