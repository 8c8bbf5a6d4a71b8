// The git reads behind the web's commit, compare and blame views (src/git/Patches.ts,
// src/git/Blame.ts) and the bound on what `Git.run` keeps (`maxOutput`), on real repositories.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { blame, parseBlame } from "../src/git/Blame.ts"
import * as Git from "../src/git/Git.ts"
import { commitPatch, mergeBase, rangePatch } from "../src/git/Patches.ts"
import { DIFF_ARGS, parseDiff } from "../src/web/code/Diff.ts"
import { gitIn } from "./support/git.ts"

let dir: string
const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
const shas: Record<string, string> = {}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hearth-git-patches-"))
  await gitIn(dir, ["init", "--quiet", "--initial-branch=main"])
  writeFileSync(join(dir, "a.txt"), "one\ntwo\nthree\n")
  await gitIn(dir, ["add", "."])
  await gitIn(dir, ["commit", "--quiet", "-m", "first"])
  shas.first = await gitIn(dir, ["rev-parse", "HEAD"])
  writeFileSync(join(dir, "a.txt"), "one\n2\nthree\nfour\n")
  await gitIn(dir, ["commit", "--quiet", "-am", "second"])
  shas.second = await gitIn(dir, ["rev-parse", "HEAD"])
  await gitIn(dir, ["checkout", "--quiet", "-b", "side", shas.first!])
  writeFileSync(join(dir, "b.txt"), "b\n")
  await gitIn(dir, ["add", "."])
  await gitIn(dir, ["commit", "--quiet", "-m", "side"])
  shas.side = await gitIn(dir, ["rev-parse", "HEAD"])
  await gitIn(dir, ["checkout", "--quiet", "--orphan", "other"])
  await gitIn(dir, ["commit", "--quiet", "-m", "unrelated"])
  shas.other = await gitIn(dir, ["rev-parse", "HEAD"])
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const gitDir = () => join(dir, ".git")

describe("patches", () => {
  it("a commit against its first parent, and a root commit against nothing", async () => {
    const second = parseDiff((await run(commitPatch(gitDir(), shas.second!, DIFF_ARGS))).text)
    expect(second.files.map((f) => [f.newPath, f.status, f.additions, f.deletions])).toEqual([
      ["a.txt", "modified", 2, 1]
    ])
    const first = parseDiff((await run(commitPatch(gitDir(), shas.first!, DIFF_ARGS))).text)
    expect(first.files.map((f) => [f.newPath, f.status, f.additions])).toEqual([["a.txt", "added", 3]])
  })

  it("a range from a merge base, and no merge base for unrelated histories", async () => {
    const base = await run(mergeBase(gitDir(), shas.second!, shas.side!))
    expect(base).toEqual(Option.some(shas.first))
    const diff = parseDiff((await run(rangePatch(gitDir(), shas.first!, shas.side!, DIFF_ARGS))).text)
    expect(diff.files.map((f) => f.newPath)).toEqual(["b.txt"])
    expect(await run(mergeBase(gitDir(), shas.second!, shas.other!))).toEqual(Option.none())
  })

  it("refuses anything but full object ids (a defect, never an argument)", async () => {
    const exit = await Effect.runPromiseExit(commitPatch(gitDir(), "--output=/tmp/x", DIFF_ARGS))
    expect(exit._tag).toBe("Failure")
  })

  it("Git.run keeps at most maxOutput bytes and says it stopped", async () => {
    const cut = await run(Git.inRepo(gitDir(), ["log", "--format=%H%n%B"], { maxOutput: 10 }))
    expect(cut.stdout.length).toBe(10)
    expect(cut.truncated).toBe(true)
    const whole = await run(Git.inRepo(gitDir(), ["rev-parse", "HEAD"], { maxOutput: 1000 }))
    expect(whole.truncated).toBeUndefined()
    expect(whole.stdout.toString().trim()).toBe(shas.other)
  })
})

describe("blame", () => {
  it("parts of consecutive lines by the commit that last changed them", async () => {
    const parts = await run(blame(gitDir(), shas.second!, "a.txt"))
    expect(parts.map((p) => [p.commit.summary, p.start, p.lines])).toEqual([
      ["first", 1, ["one"]],
      ["second", 2, ["2"]],
      ["first", 3, ["three"]],
      ["second", 4, ["four"]]
    ])
    expect(parts[1]!.commit.previous).toEqual({ sha: shas.first, path: "a.txt" })
    expect(parts[0]!.commit.author).toBe("T")
  })

  it("parses porcelain output whose lines start like headers", () => {
    const sha = "a".repeat(40)
    const output = [
      `${sha} 1 1 2`,
      "author A",
      "author-time 1700000000",
      "summary s",
      "filename f",
      `\t${"b".repeat(40)} 1 1`,
      `${sha} 2 2`,
      "\tauthor X"
    ].join("\n")
    expect(parseBlame(output)).toEqual([
      {
        commit: { sha, author: "A", authorTime: 1700000000, summary: "s", previous: undefined },
        start: 1,
        lines: [`${"b".repeat(40)} 1 1`, "author X"]
      }
    ])
  })
})
