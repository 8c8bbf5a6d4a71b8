// The commits of a push (src/git/PushedCommits.ts), read once for all who ask: the activity feed
// (in-process, while the push is published) and the webhooks' event hop (from the durable queue)
// ask for the same push within moments; the second waits for the first's `git log` rather than
// starting its own. git processes are counted by a `git` wrapper first on this process's PATH.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { pushedCommits } from "../src/git/PushedCommits.ts"
import { gitIn, recordGitProcesses } from "./support/git.ts"

let work: string
let repo: string
let git: ReturnType<typeof recordGitProcesses>
const shas: Array<string> = []

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hearth-pushed-commits-"))
  // A bare repository, as the server keeps them (git runs in it with GIT_DIR).
  const clone = join(work, "clone")
  repo = join(work, "repo.git")
  await gitIn(work, ["init", "-q", "-b", "main", clone])
  for (let i = 0; i < 4; i++) {
    writeFileSync(join(clone, `f${i}.txt`), `${i}\n`)
    await gitIn(clone, ["add", `f${i}.txt`])
    await gitIn(clone, ["commit", "-q", "-m", `commit ${i}`])
    shas.push(await gitIn(clone, ["rev-parse", "HEAD"]))
  }
  await gitIn(work, ["clone", "-q", "--bare", clone, repo])
  git = recordGitProcesses(work)
})
afterAll(() => {
  git?.stop()
  rmSync(work, { recursive: true, force: true })
})

const logsSince = (mark: number) => git.since(mark).filter((line) => line.includes(" log "))

describe("a push's commits", () => {
  it("asked for twice at once, are read by one `git log`", async () => {
    const mark = git.length()
    const [feed, hook] = await Effect.runPromise(
      Effect.all([pushedCommits(repo, shas[0]!, shas[3]!, 5), pushedCommits(repo, shas[0]!, shas[3]!, 15)], {
        concurrency: "unbounded"
      })
    )
    expect(feed.commits.map((c) => c.sha)).toEqual([shas[3], shas[2], shas[1]])
    expect(hook).toEqual(feed)
    expect(logsSince(mark)).toHaveLength(1)
  })

  it("a read that lists fewer than there are does not answer one that wants more", async () => {
    const [short, long] = await Effect.runPromise(
      Effect.all([pushedCommits(repo, shas[1]!, shas[3]!, 1), pushedCommits(repo, shas[1]!, shas[3]!, 5)], {
        concurrency: "unbounded"
      })
    )
    expect(short.commits.map((c) => c.sha)).toEqual([shas[3]])
    expect(short.total).toBe(2)
    expect(long.commits.map((c) => c.sha)).toEqual([shas[3], shas[2]])
  })

  it("a read that fails fails everyone who waited for it, and the next ask tries again", async () => {
    const missing = "1".repeat(40)
    const results = await Effect.runPromise(
      Effect.all(
        [pushedCommits(repo, shas[0]!, missing, 5), pushedCommits(repo, shas[0]!, missing, 5)].map((read) =>
          Effect.result(read)
        ),
        { concurrency: "unbounded" }
      )
    )
    expect(results.map((r) => r._tag)).toEqual(["Failure", "Failure"])
    const mark = git.length()
    await Effect.runPromise(Effect.result(pushedCommits(repo, shas[0]!, missing, 5)))
    expect(logsSince(mark)).toHaveLength(1)
  })
})
