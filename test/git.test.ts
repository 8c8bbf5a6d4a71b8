// The git module against real bare repositories in a temp directory.

import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"

let root: string
let repo: string
let first: string
let second: string
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const fail = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flip(effect)) as Promise<E & { _tag: string }>

// Commits made with plumbing, so the test needs no worktree.
const commit = (message: string, parent?: string) => {
  const env = {
    ...Git.gitEnv(),
    GIT_DIR: repo,
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@t",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@t"
  }
  const blob = execFileSync("git", ["hash-object", "-w", "--stdin"], { env, input: message }).toString().trim()
  const tree = execFileSync("git", ["mktree"], { env, input: `100644 blob ${blob}\tREADME\n` })
    .toString()
    .trim()
  return execFileSync("git", ["commit-tree", tree, "-m", message, ...(parent ? ["-p", parent] : [])], { env })
    .toString()
    .trim()
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "hearth-git-"))
  repo = join(root, "alice", "demo.git")
  await run(Git.initBare(repo, "main"))
  first = commit("one")
  second = commit("two", first)
})
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe("repository operations", () => {
  it("an empty repository: isEmpty, HEAD branch, nothing resolves", async () => {
    const empty = join(root, "alice", "empty.git")
    await run(Git.initBare(empty, "trunk"))
    expect(await run(Git.isEmpty(empty))).toBe(true)
    expect(await run(Git.headBranch(empty))).toEqual(Option.some("trunk"))
    expect(await run(Git.revParse(empty, "HEAD"))).toEqual(Option.none())
    expect(await run(Git.listRefs(empty))).toEqual([])
  })

  it("updateRef is a compare-and-swap", async () => {
    await run(Git.updateRef(repo, "refs/heads/main", first, Git.ZERO_SHA))
    expect(await run(Git.revParse(repo, "refs/heads/main"))).toEqual(Option.some(first))
    // Creating again ("must not exist") and a stale old value are both conflicts.
    expect((await fail(Git.updateRef(repo, "refs/heads/main", second, Git.ZERO_SHA)))._tag).toBe("RefConflict")
    expect((await fail(Git.updateRef(repo, "refs/heads/main", second, second)))._tag).toBe("RefConflict")
    expect(await run(Git.revParse(repo, "main"))).toEqual(Option.some(first))
    await run(Git.updateRef(repo, "refs/heads/main", second, first))
    expect(await run(Git.revParse(repo, "main"))).toEqual(Option.some(second))
    expect(await run(Git.revParse(repo, "main~1"))).toEqual(Option.some(first))
    expect(await run(Git.isEmpty(repo))).toBe(false)
    // Delete with the zero sha as the new value.
    await run(Git.updateRef(repo, "refs/heads/tmp", first, Git.ZERO_SHA))
    await run(Git.updateRef(repo, "refs/heads/tmp", Git.ZERO_SHA, first))
    expect(await run(Git.revParse(repo, "refs/heads/tmp"))).toEqual(Option.none())
  })

  it("updateRef and revParse refuse bad arguments before git runs", async () => {
    for (const [ref, sha] of [
      ["refs/heads/a..b", first],
      ["--force", first],
      ["refs/heads/x", "HEAD"],
      ["heads/x", first]
    ] as const) {
      expect((await fail(Git.updateRef(repo, ref, sha, Git.ZERO_SHA)))._tag, ref).toBe("GitArgumentError")
    }
    for (const revision of ["--all", "main..other", "a b", "x\0y", ""]) {
      expect((await fail(Git.revParse(repo, revision)))._tag, revision).toBe("GitArgumentError")
    }
    expect(await run(Git.revParse(repo, "refs/heads/missing"))).toEqual(Option.none())
  })

  it("listRefs lists all refs or those under a prefix", async () => {
    await run(Git.updateRef(repo, "refs/tags/v1", first, Git.ZERO_SHA))
    const all = await run(Git.listRefs(repo))
    expect(all).toEqual([
      { ref: "refs/heads/main", sha: second, type: "commit" },
      { ref: "refs/tags/v1", sha: first, type: "commit" }
    ])
    expect((await run(Git.listRefs(repo, "refs/tags/"))).map((r) => r.ref)).toEqual(["refs/tags/v1"])
    expect(Exit.isFailure(await Effect.runPromiseExit(Git.listRefs(repo, "--x")))).toBe(true)
  })

  it("setHeadBranch / headBranch", async () => {
    await run(Git.setHeadBranch(repo, "develop"))
    expect(await run(Git.headBranch(repo))).toEqual(Option.some("develop"))
    expect((await fail(Git.setHeadBranch(repo, "bad..name")))._tag).toBe("GitArgumentError")
    await run(Git.setHeadBranch(repo, "main"))
    expect(await run(Git.revParse(repo, "HEAD"))).toEqual(Option.some(second))
  })

  it("sizeKiB counts loose and packed objects; commitGraphWrite writes the graph", async () => {
    expect(await run(Git.sizeKiB(repo))).toBeGreaterThan(0)
    await run(Git.commitGraphWrite(repo))
    const graph = execFileSync("git", ["commit-graph", "verify"], { env: { ...Git.gitEnv(), GIT_DIR: repo } })
    expect(graph).toBeDefined()
    const info = execFileSync("ls", [join(repo, "objects", "info")]).toString()
    expect(info).toContain("commit-graph")
  })
})
