// A merge's git work with fewer processes (issue 19, "Speed"): the commit object written
// in-process is the one `git commit-tree` writes for the same inputs (SHA-1 and SHA-256, names and
// dates git would clean up going through git itself), and `git fsck` finds nothing wrong with it;
// ref moves through one long-lived `update-ref --stdin` (Git.RefTransactions, as the Repository
// entity keeps it) still compare and swap: a ref moved meanwhile by anyone else makes the
// transaction fail with RefConflict and nothing is overwritten.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"
import * as Merge from "../src/git/Merge.ts"
import type { Signature } from "../src/git/Write.ts"
import * as Write from "../src/git/Write.ts"
import { gitIn } from "./support/git.ts"

let work: string

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hearth-merge-commit-"))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A bare repository of `format` with two branches, `main` and `topic`, from one root. */
const repository = async (name: string, format: "sha1" | "sha256") => {
  const dir = join(work, name)
  await gitIn(work, ["init", "-q", "--bare", `--object-format=${format}`, dir])
  const blob = async (text: string) => {
    const file = join(work, `${name}-blob`)
    writeFileSync(file, text)
    return gitIn(dir, ["hash-object", "-w", "--", file], { GIT_DIR: dir })
  }
  const mktree = async (text: string) => {
    const entry = `100644 blob ${await blob(text)}\tfile.txt\n`
    return new Promise<string>((done, fail) => {
      const child = execFile("git", ["mktree"], { env: Git.gitEnv({ GIT_DIR: dir }) }, (error, stdout) =>
        error === null ? done(stdout.trim()) : fail(error)
      )
      child.stdin!.end(entry)
    })
  }
  const root = await gitIn(dir, ["commit-tree", "-m", "root", await mktree("root\n")], { GIT_DIR: dir })
  const main = await gitIn(dir, ["commit-tree", "-p", root, "-m", "main", await mktree("main\n")], { GIT_DIR: dir })
  const topic = await gitIn(dir, ["commit-tree", "-p", root, "-m", "topic", await mktree("topic\n")], {
    GIT_DIR: dir
  })
  await gitIn(dir, ["update-ref", "refs/heads/main", main], { GIT_DIR: dir })
  await gitIn(dir, ["update-ref", "refs/heads/topic", topic], { GIT_DIR: dir })
  return { dir, main, topic, tree: await mktree("merged\n") }
}

const stamp = (who: Signature) => {
  const sign = who.offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(who.offsetMinutes)
  return `@${who.seconds} ${sign}${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`
}

/** What `git commit-tree` itself makes of the same inputs. */
const byGit = (
  dir: string,
  spec: { tree: string; parents: ReadonlyArray<string>; message: string; author: Signature; committer: Signature }
) =>
  new Promise<string>((done, fail) => {
    {
      const child = execFile(
        "git",
        ["commit-tree", ...spec.parents.flatMap((p) => ["-p", p]), "-F", "-", spec.tree],
        {
          env: Git.gitEnv({
            GIT_DIR: dir,
            GIT_AUTHOR_NAME: spec.author.name,
            GIT_AUTHOR_EMAIL: spec.author.email,
            GIT_AUTHOR_DATE: stamp(spec.author),
            GIT_COMMITTER_NAME: spec.committer.name,
            GIT_COMMITTER_EMAIL: spec.committer.email,
            GIT_COMMITTER_DATE: stamp(spec.committer)
          })
        },
        (error, stdout) => (error === null ? done(stdout.trim()) : fail(error))
      )
      child.stdin!.end(spec.message)
    }
  })

const who = (name: string, email: string, seconds = 1_700_000_000, offsetMinutes = 0): Signature => ({
  name,
  email,
  seconds,
  offsetMinutes
})

describe("a merge's commit written in-process", () => {
  for (const format of ["sha1", "sha256"] as const) {
    it(`is the object git commit-tree writes for the same inputs (${format}), and fsck is clean`, async () => {
      const repo = await repository(`plain-${format}`, format)
      const cases = [
        { author: who("Alice", "alice@example.com"), message: "Merge pull request 'x' (#1) from topic into main\n" },
        { author: who("Zoë Ðrăgan 名前", "zoe@例え.jp", 1_700_000_123, 330), message: "Ünïcode\n\nbody 🎉\n" },
        { author: who("Bob.", "bob@example.com", 1_600_000_000, -480), message: "no newline at the end" },
        { author: who("O'Brien Smith", "ob@example.com", 0, -59), message: "\n\nleading blank lines\n\n\n" },
        // Names and dates git cleans up or reads otherwise: commit-tree writes these.
        { author: who(" Padded ", "  pad@example.com ", 1_700_000_000, 60), message: "padded\n" },
        { author: who("Quoted'", "'q@example.com'", 1_700_000_000, 0), message: "crud at the ends\n" },
        { author: who("Far", "far@example.com", 1_700_000_000, 25 * 60), message: "an offset of 25 hours\n" },
        { author: who("Half", "half@example.com", 1_700_000_000.5, 0), message: "half a second\n" }
      ]
      for (const { author, message } of cases) {
        for (const parents of [[repo.main, repo.topic], [repo.main], [repo.main, repo.main]]) {
          const spec = { tree: repo.tree, parents, message, author, committer: who("Hearth", "noreply@example.com") }
          const ours = await Effect.runPromise(Merge.commitTree(repo.dir, spec))
          expect(ours).toHaveLength(format === "sha1" ? 40 : 64)
          const theirs = await byGit(repo.dir, spec)
          expect(ours).toBe(theirs)
        }
      }
      // In-process only where git would write the inputs unchanged.
      const plain = { tree: repo.tree, parents: [repo.main], message: "m\n", committer: who("H", "h@example.com") }
      expect(Write.commitObject(repo.dir, { ...plain, author: who("Alice", "alice@example.com") })).toBeDefined()
      expect(Write.commitObject(repo.dir, { ...plain, author: who(" Padded ", "p@example.com") })).toBeUndefined()
      expect(Write.commitObject(repo.dir, { ...plain, author: who("A", "a@example.com"), message: "a\0b" })).toBe(
        undefined
      )
      // Objects a reader finds, read-only as git makes them, and no temporary file left behind.
      await gitIn(repo.dir, ["fsck", "--strict", "--no-dangling"], { GIT_DIR: repo.dir })
      const written = Write.commitObject(repo.dir, {
        ...plain,
        message: "a fresh one\n",
        author: who("Alice", "alice@example.com")
      })!
      expect(await gitIn(repo.dir, ["cat-file", "-t", written], { GIT_DIR: repo.dir })).toBe("commit")
      const fanOut = join(repo.dir, "objects", written.slice(0, 2))
      expect(statSync(join(fanOut, written.slice(2))).mode & 0o222).toBe(0)
      expect(readdirSync(fanOut).filter((f) => f.startsWith("tmp_obj_"))).toEqual([])
      // Written again: the same name, the object left as it was.
      expect(
        Write.commitObject(repo.dir, { ...plain, message: "a fresh one\n", author: who("Alice", "alice@example.com") })
      ).toBe(written)
    })
  }
})

describe("ref moves through a long-lived update-ref (Git.RefTransactions)", () => {
  it("compare and swap across transactions: a ref moved by someone else meanwhile fails the move, nothing overwritten", async () => {
    const repo = await repository("cas", "sha1")
    const refs = new Git.RefTransactions()
    try {
      const move = (to: string, from: string) =>
        Effect.runPromiseExit(Git.updateRefs(repo.dir, [{ ref: "refs/heads/main", newSha: to, oldSha: from }], refs))
      const tip = () => gitIn(repo.dir, ["rev-parse", "refs/heads/main"], { GIT_DIR: repo.dir })
      // A commit written in-process after the process started can be a ref's new value.
      const merged = Write.commitObject(repo.dir, {
        tree: repo.tree,
        parents: [repo.main, repo.topic],
        message: "merge\n",
        author: who("Alice", "alice@example.com"),
        committer: who("Alice", "alice@example.com")
      })!
      expect(Exit.isSuccess(await move(merged, repo.main))).toBe(true)
      expect(await tip()).toBe(merged)
      // Someone else (a push) moves main; the next move from the old value fails and changes nothing.
      await gitIn(repo.dir, ["update-ref", "refs/heads/main", repo.topic, merged], { GIT_DIR: repo.dir })
      const refused = await move(repo.main, merged)
      expect(Exit.isFailure(refused)).toBe(true)
      expect(JSON.stringify(refused)).toContain("RefConflict")
      expect(await tip()).toBe(repo.topic)
      // Packed refs too: the value git packed is the one compared.
      await gitIn(repo.dir, ["pack-refs", "--all"], { GIT_DIR: repo.dir })
      expect(Exit.isFailure(await move(repo.main, merged))).toBe(true)
      expect(await tip()).toBe(repo.topic)
      // The next transaction (a new process after git ended the failed one) works; several refs at once, or none.
      expect(Exit.isSuccess(await move(repo.main, repo.topic))).toBe(true)
      const both = await Effect.runPromiseExit(
        Git.updateRefs(
          repo.dir,
          [
            { ref: "refs/heads/main", newSha: merged, oldSha: repo.main },
            { ref: "refs/heads/topic", newSha: repo.main, oldSha: repo.main } // topic is not at main: all refused
          ],
          refs
        )
      )
      expect(Exit.isFailure(both)).toBe(true)
      expect(await tip()).toBe(repo.main)
      // Transactions asked at once run one after the other, each from the value the previous one left.
      const moves = await Promise.all([move(merged, repo.main), move(repo.topic, merged), move(repo.main, repo.topic)])
      expect(moves.every(Exit.isSuccess)).toBe(true)
      expect(await tip()).toBe(repo.main)
      // A repository deleted and made again at the same path: the moves go to the new one.
      rmSync(repo.dir, { recursive: true, force: true })
      const again = await repository("cas", "sha1")
      expect(Exit.isSuccess(await move(again.topic, again.main))).toBe(true)
      expect(await tip()).toBe(again.topic)
    } finally {
      refs.close()
    }
  })

  it("keeps at most 16 processes open across repositories; a write to one whose process was ended starts another", async () => {
    const repo = await repository("many", "sha1")
    const all = Array.from({ length: 20 }, () => new Git.RefTransactions())
    const running = () =>
      new Promise<number>((done, fail) =>
        execFile("ps", ["-o", "args=", "--ppid", String(Git.spawnerPid())], (error, stdout) =>
          error === null
            ? done(stdout.split("\n").filter((line) => line.startsWith("git update-ref --stdin")).length)
            : fail(error)
        )
      )
    try {
      for (const [i, refs] of all.entries()) {
        await Effect.runPromise(
          Git.updateRefs(repo.dir, [{ ref: `refs/heads/t${i}`, newSha: repo.main, oldSha: Git.ZERO_SHA }], refs)
        )
      }
      // The ended ones exit once they read the end of their input.
      for (let i = 0; i < 100 && (await running()) > 16; i++) await new Promise((r) => setTimeout(r, 20))
      expect(await running()).toBe(16)
      // The first (ended) writes again through a new process.
      await Effect.runPromise(
        Git.updateRefs(repo.dir, [{ ref: "refs/heads/t0", newSha: repo.topic, oldSha: repo.main }], all[0]!)
      )
      expect(await gitIn(repo.dir, ["rev-parse", "refs/heads/t0"], { GIT_DIR: repo.dir })).toBe(repo.topic)
    } finally {
      for (const refs of all) refs.close()
    }
  })
})

describe("a clean merge computed lately (Merge.mergeTrees)", () => {
  it("is taken again while its tree is on disk, computed again once it is not", async () => {
    const repo = await repository("recent", "sha1")
    const env = { GIT_DIR: repo.dir }
    const withStdin = (args: ReadonlyArray<string>, input: string) =>
      new Promise<string>((done, fail) => {
        const child = execFile("git", args as Array<string>, { env: Git.gitEnv(env) }, (error, stdout) =>
          error === null ? done(stdout.trim()) : fail(error)
        )
        child.stdin!.end(input)
      })
    const blob = (text: string) => withStdin(["hash-object", "-w", "--stdin"], text)
    const commitOf = async (a: string, b: string, parents: ReadonlyArray<string>) => {
      const tree = await withStdin(
        ["mktree"],
        `100644 blob ${await blob(a)}\ta.txt\n100644 blob ${await blob(b)}\tb.txt\n`
      )
      return gitIn(repo.dir, ["commit-tree", ...parents.flatMap((p) => ["-p", p]), "-m", `${a}${b}`, tree], env)
    }
    // From one root, one side changes a.txt, the other b.txt: their merge is a tree no commit has.
    const root = await commitOf("a\n", "b\n", [])
    const ours = await commitOf("a changed\n", "b\n", [root])
    const theirs = await commitOf("a\n", "b changed\n", [root])
    const clean = await Effect.runPromise(Merge.mergeTrees(repo.dir, ours, theirs))
    expect(clean._tag).toBe("Clean")
    const tree = (clean as { tree: string }).tree
    const file = join(repo.dir, "objects", tree.slice(0, 2), tree.slice(2))
    expect(statSync(file).isFile()).toBe(true)
    expect(await Effect.runPromise(Merge.mergeTrees(repo.dir, ours, theirs))).toEqual(clean)
    // Gone from disk (pruned): git computes it again, and writes it again.
    rmSync(file, { force: true })
    expect(await Effect.runPromise(Merge.mergeTrees(repo.dir, ours, theirs))).toEqual(clean)
    expect(statSync(file).isFile()).toBe(true)
    // A conflict is never remembered (main and topic both change file.txt).
    expect((await Effect.runPromise(Merge.mergeTrees(repo.dir, repo.main, repo.topic)))._tag).toBe("Conflict")
    await gitIn(repo.dir, ["fsck", "--strict"], env)
  })
})

describe("the repository's size from its object directory (Git.sizeKiB)", () => {
  it("lists again only the fan-out directories changed since they were counted, and stays count-objects'", async () => {
    const repo = await repository("size", "sha1")
    const env = { GIT_DIR: repo.dir }
    const countObjects = async () => {
      let total = 0
      for (const line of (await gitIn(repo.dir, ["count-objects", "-v"], env)).split("\n")) {
        const [key, value] = line.split(": ")
        if (key === "size" || key === "size-pack") total += Number(value)
      }
      return total
    }
    const size = () => Effect.runPromise(Git.sizeKiB(repo.dir))
    const objects = join(repo.dir, "objects")
    const fanOuts = () => readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d))
    // Every directory last changed 10 s ago: counted once, then taken as counted.
    const past = Math.floor(Date.now() / 1000) - 10
    const age = () => {
      for (const d of fanOuts()) utimesSync(join(objects, d), past, past)
    }
    age()
    expect(await size()).toBe(await countObjects())
    // A file slipped into a counted directory with its time put back is not seen: it was not listed again.
    const dir = fanOuts()[0]!
    writeFileSync(join(objects, dir, "f".repeat(38)), Buffer.alloc(40_000, 1))
    utimesSync(join(objects, dir), past, past)
    const counted = await size()
    expect(counted).toBeLessThan(await countObjects())
    rmSync(join(objects, dir, "f".repeat(38)))
    utimesSync(join(objects, dir), past, past)
    expect(await size()).toBe(counted)
    // Objects written now change their directories' times: counted again, count-objects' number.
    for (let i = 0; i < 40; i++) await blobOf(repo.dir, `object ${i}\n${"x".repeat(3000 * i)}`)
    expect(await size()).toBe(await countObjects())
    // A directory changed less than a second before it is counted: its count is not kept (a file
    // added later in the same tick of the file system's clock would leave its time as it was).
    const recent = fanOuts()[1]!
    const tick = Date.now() / 1000 + 0.5
    utimesSync(join(objects, recent), tick, tick)
    await size()
    writeFileSync(join(objects, recent, "e".repeat(38)), Buffer.alloc(40_000, 2))
    utimesSync(join(objects, recent), tick, tick)
    expect(await size()).toBe(await countObjects())
    rmSync(join(objects, recent, "e".repeat(38)))
  })

  it("reads many changed loose objects in slices, letting the event loop through between them", async () => {
    const repo = await repository("size-slices", "sha1")
    const files = Array.from({ length: 500 }, (_, i) => {
      const file = join(work, `slice-${i}.txt`)
      writeFileSync(file, `loose ${i}\n`)
      return file
    })
    await gitIn(repo.dir, ["hash-object", "-w", "--", ...files], { GIT_DIR: repo.dir })
    // 500 objects, none counted before: at least one turn of the event loop comes between slices
    // (read in one go, as 512 or fewer once were, none would).
    let turns = 0
    let counting = true
    const turn = () => {
      turns++
      if (counting) setImmediate(turn)
    }
    setImmediate(turn)
    const kib = await Effect.runPromise(Git.sizeKiB(repo.dir))
    counting = false
    expect(turns).toBeGreaterThanOrEqual(1)
    let total = 0
    for (const line of (await gitIn(repo.dir, ["count-objects", "-v"], { GIT_DIR: repo.dir })).split("\n")) {
      const [key, value] = line.split(": ")
      if (key === "size" || key === "size-pack") total += Number(value)
    }
    expect(kib).toBe(total)
  })
})

/** Writes a blob into `dir`'s object store. */
const blobOf = (dir: string, text: string) =>
  new Promise<string>((done, fail) => {
    const child = execFile(
      "git",
      ["hash-object", "-w", "--stdin"],
      { env: Git.gitEnv({ GIT_DIR: dir }) },
      (error, stdout) => (error === null ? done(stdout.trim()) : fail(error))
    )
    child.stdin!.end(text)
  })
