// The Repository entity on effect/cluster's in-memory TestRunner, against real bare repositories:
// writes to one repository run one at a time (concurrent commits without an expected parent all
// land, one after the other), different repositories in parallel, and replayed messages are safe.

import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { TestRunner } from "effect/cluster"
import { afterAll, describe, expect, it } from "vitest"
import { gitEnv, ZERO_SHA } from "../src/git/Git.ts"
import { RepositoryEntityLayer, RepositoryWriter } from "../src/git/Repository.ts"
import { signatureAt } from "../src/git/Write.ts"

const root = mkdtempSync(join(tmpdir(), "hearth-entity-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

const layer = Layer.mergeAll(RepositoryWriter.layer, RepositoryEntityLayer).pipe(Layer.provideMerge(TestRunner.layer))
const runWriter = <A, E>(f: (writer: RepositoryWriter["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(Effect.flatMap(RepositoryWriter, f), layer)))

const git = (dir: string, args: ReadonlyArray<string>) =>
  execFileSync("git", ["--git-dir", dir, ...args], { env: gitEnv() })
    .toString("utf8")
    .trim()

const who = signatureAt({ name: "Tester", email: "t@example.com" }, new Date("2024-05-06T07:08:09Z"))
const create = (path: string, text: string) => ({ operation: "create" as const, path, content: Buffer.from(text) })

describe("Repository entity", () => {
  it("serializes concurrent commits to one repository and runs repositories side by side", async () => {
    const repos = [1, 2].map((id) => ({ id, dir: join(root, `r${id}.git`) }))
    const results = await runWriter((writer) =>
      Effect.gen(function* () {
        yield* Effect.forEach(repos, (repo) => writer.init(repo, "main"))
        // 2 repositories × 20 commits, all fired at once; none says which parent it expects.
        return yield* Effect.forEach(
          repos.flatMap((repo) => Array.from({ length: 20 }, (_, i) => [repo, i] as const)),
          ([repo, i]) =>
            Effect.result(
              writer.commitFiles(repo, {
                branch: "main",
                files: [create(`f${i}.txt`, `${i}\n`)],
                message: `commit ${i}\n`,
                author: who,
                committer: who
              })
            ),
          { concurrency: "unbounded" }
        )
      })
    )
    expect(results.every((r) => r._tag === "Success")).toBe(true)
    for (const repo of repos) {
      expect(git(repo.dir, ["rev-list", "--count", "main"])).toBe("20")
      expect(git(repo.dir, ["rev-list", "--min-parents=2", "main"])).toBe("")
      expect(git(repo.dir, ["ls-tree", "--name-only", "main"]).split("\n").length).toBe(20)
      git(repo.dir, ["fsck", "--strict", "--no-progress"])
    }
  })

  it("refuses a replayed commit instead of applying it twice", async () => {
    const repo = { id: 3, dir: join(root, "r3.git") }
    const spec = {
      branch: "main",
      files: [create("once.txt", "once\n")],
      message: "once\n",
      author: who,
      committer: who
    }
    const [first, second] = await runWriter((writer) =>
      Effect.gen(function* () {
        yield* writer.init(repo, "main")
        yield* writer.init(repo, "main") // a replayed init leaves the repository alone
        return [
          yield* Effect.result(writer.commitFiles(repo, spec)),
          yield* Effect.flip(writer.commitFiles(repo, spec))
        ] as const
      })
    )
    expect(first._tag).toBe("Success")
    expect(second).toMatchObject({ _tag: "WriteRejected", reason: "invalid" })
    expect(git(repo.dir, ["rev-list", "--count", "main"])).toBe("1")
  })

  it("moves refs only from the expected old value (409 otherwise)", async () => {
    const repo = { id: 4, dir: join(root, "r4.git") }
    const error = await runWriter((writer) =>
      Effect.gen(function* () {
        yield* writer.init(repo, "main")
        const made = yield* writer.commitFiles(repo, {
          branch: "main",
          files: [create("a", "a")],
          message: "a\n",
          author: who,
          committer: who
        })
        yield* writer.updateRefs(repo, [{ ref: "refs/heads/copy", newSha: made.sha, oldSha: ZERO_SHA }])
        return yield* Effect.flip(
          writer.updateRefs(repo, [{ ref: "refs/heads/copy", newSha: made.sha, oldSha: ZERO_SHA }])
        )
      })
    )
    expect(error).toMatchObject({ reason: "conflict" })
  })

  it("moves and removes a repository, and a replayed move is a no-op", async () => {
    const repo = { id: 5, dir: join(root, "r5.git") }
    const to = join(root, "moved", "r5.git")
    await runWriter((writer) =>
      Effect.gen(function* () {
        yield* writer.init(repo, "main")
        yield* writer.move(repo, to)
        yield* writer.move(repo, to)
      })
    )
    expect(existsSync(repo.dir)).toBe(false)
    expect(existsSync(join(to, "HEAD"))).toBe(true)
    await runWriter((writer) => writer.remove({ id: 5, dir: to }))
    expect(existsSync(to)).toBe(false)
  })
})
