// The long-lived readers of src/git/Readers.ts on real repositories, without a server: revisions,
// trees and paths read through `cat-file --batch` must agree with the git commands they replace,
// see every ref change at once, and spawn nothing once warm; the last-commit cache is bounded and
// runs one `git log` for concurrent misses.

import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import * as Readers from "../src/git/Readers.ts"
import { recordGitProcesses } from "./support/git.ts"

let work: string
const pool = new Readers.BatchPool()

const git = (args: ReadonlyArray<string>, cwd: string, input?: string) =>
  new Promise<string>((done, fail) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com"
    })
    const child = execFile("git", args as Array<string>, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
    child.stdin!.end(input)
  })

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

/** The commands (`cwd|args`) of the git processes started while `f` runs, here or in the spawner. */
const spawnedDuring = async <A>(f: () => Promise<A>): Promise<[A, Array<string>]> => {
  const recorder = recordGitProcesses(join(work, "recorded"))
  try {
    return [await f(), recorder.since(0)]
  } finally {
    recorder.stop()
  }
}

/** A bare repository at `dir` with the files of `files` committed on main; returns the commit. */
const makeRepo = async (dir: string, files: Record<string, string>, format: "sha1" | "sha256" = "sha1") => {
  const tree = join(work, `tree-${Math.random().toString(36).slice(2)}`)
  await git(["init", "--quiet", `--object-format=${format}`, "--initial-branch=main", tree], work)
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(tree, path, ".."), { recursive: true })
    writeFileSync(join(tree, path), content)
  }
  await git(["add", "."], tree)
  await git(["commit", "--quiet", "-m", "first"], tree)
  await git(["clone", "--quiet", "--bare", tree, dir], work)
  return git(["rev-parse", "HEAD"], dir)
}

/** Every path of `commit` (trees included) with its `ls-tree --long` entry. */
const lsTree = async (dir: string, commit: string) => {
  const out = await git(["ls-tree", "-z", "-r", "-t", "--long", "--full-tree", commit], dir)
  return out
    .split("\0")
    .filter((line) => line !== "")
    .map((line) => {
      const [meta, path] = line.split("\t")
      const [mode, type, sha, size] = meta!.split(/ +/)
      return { mode: mode!, type: type!, sha: sha!, size: size === "-" ? 0 : Number(size), path: path! }
    })
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hearth-readers-"))
})
afterAll(() => {
  pool.close()
  rmSync(work, { recursive: true, force: true })
})

describe("trees and paths through the reader", () => {
  for (const format of ["sha1", "sha256"] as const) {
    it(`find every entry as ls-tree does (${format})`, async () => {
      const dir = join(work, `paths-${format}.git`)
      const commit = await makeRepo(
        dir,
        {
          "README.md": "# hi\n",
          "a b/ünïcode name.txt": "x\n",
          "src/deep/er/file.ts": "export {}\n",
          "src/run.sh": "#!/bin/sh\n",
          empty: ""
        },
        format
      )
      // An executable, a symlink and a submodule entry, added to the index by hand.
      const blob = await git(["hash-object", "-w", "--stdin"], dir, "target\n")
      const worktree = join(work, `wt-${format}`)
      await git(["worktree", "add", "--quiet", worktree, "main"], dir)
      await git(["update-index", "--chmod=+x", "src/run.sh"], worktree)
      await git(["update-index", "--add", "--cacheinfo", `120000,${blob},link`], worktree)
      await git(["update-index", "--add", "--cacheinfo", `160000,${commit},vendor/sub`], worktree)
      await git(["commit", "--quiet", "-m", "more"], worktree)
      const head = await git(["rev-parse", "HEAD"], worktree)

      const resolved = await run(Readers.commitThrough(pool, dir, "refs/heads/main"))
      expect(Option.getOrThrow(resolved).commit).toBe(head)
      const root = Option.getOrThrow(resolved).tree
      expect(root).toBe(await git(["rev-parse", `${head}^{tree}`], dir))
      const expected = await lsTree(dir, head)
      expect(expected.map((e) => e.mode)).toEqual(
        expect.arrayContaining(["100644", "100755", "120000", "160000", "040000"])
      )
      for (const entry of expected) {
        const found = await run(Readers.entryThrough(pool, dir, root, entry.path))
        const { size: _, ...withoutSize } = entry
        expect(Option.getOrUndefined(found), entry.path).toEqual(withoutSize)
      }
      // Listings in git's order, sizes from --batch-check.
      const top = await run(Readers.treeThrough(pool, dir, root))
      expect(top.map((e) => e.path)).toEqual(expected.filter((e) => !e.path.includes("/")).map((e) => e.path))
      const blobs = expected.filter((e) => e.type === "blob")
      const sizes = await run(
        pool.info(
          dir,
          blobs.map((e) => e.sha)
        )
      )
      for (const e of blobs) expect(sizes.get(e.sha)?.size, e.path).toBe(e.size)
      // The root itself, and paths that are not there.
      expect(Option.getOrThrow(await run(Readers.entryThrough(pool, dir, root, "")))).toMatchObject({
        type: "tree",
        sha: root,
        path: ""
      })
      for (const missing of ["nope", "src/nope", "README.md/x", "vendor/sub/x", "src/deep/er/file.ts/more", "SRC"]) {
        expect(Option.isNone(await run(Readers.entryThrough(pool, dir, root, missing))), missing).toBe(true)
      }
      await git(["worktree", "remove", "--force", worktree], dir)
    })
  }
})

describe("objects through the reader", () => {
  it("read big and small objects side by side, each whole and in order", async () => {
    const dir = join(work, "big.git")
    await makeRepo(dir, { "f.txt": "1\n" })
    const big = Buffer.alloc(6 * 1024 * 1024 + 7)
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) % 251
    const path = join(work, "big.bin")
    writeFileSync(path, big)
    const bigSha = await git(["hash-object", "-w", path], dir)
    const smallSha = await git(["hash-object", "-w", "--stdin"], dir, "small\n")
    const reads = await Promise.all(
      [smallSha, bigSha, smallSha, bigSha, smallSha].map((sha) => run(pool.read(dir, sha)))
    )
    expect(reads.map((r) => Option.getOrThrow(r).bytes.length)).toEqual([6, big.length, 6, big.length, 6])
    expect(Option.getOrThrow(reads[1]!).bytes.equals(big)).toBe(true)
    expect(Option.getOrThrow(reads[4]!).bytes.toString()).toBe("small\n")
    // Objects written after the reader started are found; unknown ones are none.
    const later = await git(["hash-object", "-w", "--stdin"], dir, "later\n")
    expect(Option.getOrThrow(await run(pool.read(dir, later))).bytes.toString()).toBe("later\n")
    expect(Option.isNone(await run(pool.read(dir, "0123456789012345678901234567890123456789")))).toBe(true)
    const sizes = await run(pool.info(dir, [bigSha, "0123456789012345678901234567890123456789", smallSha]))
    expect([...sizes.entries()].map(([sha, o]) => [sha, o.type, o.size])).toEqual([
      [bigSha, "blob", big.length],
      [smallSha, "blob", 6]
    ])
  })
})

describe("the pool", () => {
  it("lets a reader it replaces answer what it was already asked", async () => {
    const small = new Readers.BatchPool(1)
    try {
      const dirs = await Promise.all(
        ["one", "two", "three"].map(async (name) => {
          const dir = join(work, `pool-${name}.git`)
          return { dir, commit: await makeRepo(dir, { "f.txt": `${name}\n` }) }
        })
      )
      // Interleaved: every switch of repository replaces the single reader while others wait on it.
      const asks = Array.from({ length: 60 }, (_, i) => dirs[i % 3]!)
      const answers = await Promise.all(
        asks.map(({ dir }) => run(Readers.commitThrough(small, dir, "refs/heads/main")))
      )
      expect(answers.map((a) => Option.getOrThrow(a).commit)).toEqual(asks.map((a) => a.commit))
    } finally {
      small.close()
    }
  })
})

describe("revisions through the reader", () => {
  it("see refs moved, created, packed and deleted at once, and spawn nothing for it", async () => {
    const dir = join(work, "refs.git")
    const first = await makeRepo(dir, { "f.txt": "1\n" })
    const tree = await git(["rev-parse", `${first}^{tree}`], dir)
    const second = await git(["commit-tree", "-p", first, "-m", "second", tree], dir)
    const commitOf = async (revision: string) =>
      Option.getOrUndefined(await run(Readers.commitThrough(pool, dir, revision)))?.commit
    expect(await commitOf("refs/heads/main")).toBe(first) // starts the reader

    const [, spawned] = await spawnedDuring(async () => {
      for (let i = 0; i < 50; i++) expect(await commitOf("refs/heads/main")).toBe(first)
      await git(["update-ref", "refs/heads/main", second], dir)
      expect(await commitOf("refs/heads/main")).toBe(second)
      expect(await commitOf("refs/tags/v1")).toBeUndefined()
      await git(["tag", "-a", "-m", "v1", "v1", first], dir)
      expect(await commitOf("refs/tags/v1")).toBe(first) // an annotated tag, peeled
      await git(["pack-refs", "--all"], dir)
      expect(await commitOf("refs/heads/main")).toBe(second)
      await git(["update-ref", "refs/heads/main", first], dir) // a loose ref over the packed one
      expect(await commitOf("refs/heads/main")).toBe(first)
      await git(["update-ref", "-d", "refs/tags/v1"], dir) // rewrites packed-refs
      expect(await commitOf("refs/tags/v1")).toBeUndefined()
      expect(await commitOf(second)).toBe(second)
      expect(await commitOf(second.slice(0, 8))).toBe(second)
      expect(await commitOf(tree)).toBeUndefined() // a tree is not a commit
    })
    // Only the git commands the test itself ran.
    expect(spawned.filter((command) => command.includes("cat-file") || command.includes("rev-parse"))).toEqual([])
  })

  it("refuse names that are not one plain revision, without upsetting the reader", async () => {
    const dir = join(work, "names.git")
    const first = await makeRepo(dir, { "f.txt": "1\n" })
    for (const name of [
      "refs/heads/main\nrefs/heads/main",
      "main..main",
      "-main",
      "main main",
      ":/first",
      "main^{/first}",
      "",
      "x".repeat(2000)
    ]) {
      expect(Option.isNone(await run(Readers.commitThrough(pool, dir, name))), JSON.stringify(name)).toBe(true)
    }
    // Answers still line up with questions.
    const [a, b] = await Promise.all([
      run(Readers.commitThrough(pool, dir, "refs/heads/nope")),
      run(Readers.commitThrough(pool, dir, "refs/heads/main"))
    ])
    expect(Option.isNone(a)).toBe(true)
    expect(Option.getOrThrow(b).commit).toBe(first)
  })

  it("follow a repository deleted and created again in the same directory", async () => {
    const dir = join(work, "again.git")
    const one = await makeRepo(dir, { "f.txt": "one\n" })
    expect(Option.getOrThrow(await run(Readers.commitThrough(pool, dir, "refs/heads/main"))).commit).toBe(one)
    rmSync(dir, { recursive: true, force: true })
    const two = await makeRepo(dir, { "f.txt": "two\n" })
    expect(two).not.toBe(one)
    expect(Option.getOrThrow(await run(Readers.commitThrough(pool, dir, "refs/heads/main"))).commit).toBe(two)
  })
})

describe("last-commit cache", () => {
  let dir: string
  let commits: Array<string>
  beforeAll(async () => {
    dir = join(work, "history.git")
    await makeRepo(dir, { "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n" })
    const worktree = join(work, "history-wt")
    await git(["worktree", "add", "--quiet", worktree, "main"], dir)
    for (const name of ["a.txt", "b.txt"]) {
      writeFileSync(join(worktree, name), `${name} changed\n`)
      await git(["commit", "--quiet", "-am", name], worktree)
    }
    commits = (await git(["rev-list", "--reverse", "main"], dir)).split("\n")
  })

  it("answers as git log does, one git log for concurrent misses, none for hits", async () => {
    const cache = new Readers.LastCommitCache()
    const head = commits[2]!
    const [answers, spawned] = await spawnedDuring(() =>
      Promise.all(Array.from({ length: 20 }, () => run(cache.get(dir, head, "c.txt"))))
    )
    expect(new Set(answers.map((a) => a?.sha))).toEqual(new Set([commits[0]]))
    expect(spawned.length).toBe(1)
    expect(cache.size).toBe(1)
    const [again, none] = await spawnedDuring(() => run(cache.get(dir, head, "c.txt")))
    expect(again).toEqual(answers[0])
    expect(none).toEqual([])
    expect((await run(cache.get(dir, head, "a.txt")))?.sha).toBe(commits[1])
    expect((await run(cache.get(dir, head, "b.txt")))?.sha).toBe(commits[2])
    expect((await run(cache.get(dir, commits[1]!, "b.txt")))?.sha).toBe(commits[0])
    expect((await run(cache.get(dir, head, "")))?.sha).toBe(head)
  })

  it("keeps the most recently used entries up to its bound", async () => {
    const cache = new Readers.LastCommitCache(2)
    const head = commits[2]!
    const spawns = async (path: string) => (await spawnedDuring(() => run(cache.get(dir, head, path))))[1].length
    expect(await spawns("a.txt")).toBe(1)
    expect(await spawns("b.txt")).toBe(1)
    expect(await spawns("a.txt")).toBe(0) // a is now the most recent
    expect(await spawns("c.txt")).toBe(1) // evicts b
    expect(cache.size).toBe(2)
    expect(await spawns("a.txt")).toBe(0)
    expect(await spawns("b.txt")).toBe(1)
  })

  it("does not keep failures", async () => {
    const cache = new Readers.LastCommitCache()
    const later = join(work, "later.git")
    const commit = commits[2]!
    expect(Exit.isFailure(await Effect.runPromiseExit(cache.get(later, commit, "a.txt")))).toBe(true)
    expect(cache.size).toBe(0)
    await git(["clone", "--quiet", "--bare", dir, later], work)
    expect((await run(cache.get(later, commit, "a.txt")))?.sha).toBe(commits[1])
  })
})
