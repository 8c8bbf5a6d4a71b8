// Leftovers of interrupted pushes (issue 15 item 8): the quarantine directories a killed
// `git receive-pack` leaves in `objects/tmp_objdir-incoming-*` are removed when Hearth starts —
// those nobody touched since the start, never one a push in progress is writing — and the
// repository itself is left as it was.
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { sweepQuarantines } from "../src/git/Quarantine.ts"
import { gitIn } from "./support/git.ts"
import { freePort, freshPostgresDatabase } from "./support/hearth.ts"
import { killAll, sleep, spawnHearth, within } from "./support/spawn.ts"

const scratch = mkdtempSync(join(tmpdir(), "hearth-leftovers-"))
afterAll(() => {
  killAll()
  rmSync(scratch, { recursive: true, force: true })
})

const quarantines = (repo: string) =>
  readdirSync(join(repo, "objects"))
    .filter((name) => name.startsWith("tmp_objdir-incoming-"))
    .sort()

/** A bare repository with one commit, as `root/owner/name.git`; returns its path. */
const repository = async (root: string, owner: string, name: string) => {
  const path = join(root, owner, `${name}.git`)
  mkdirSync(join(root, owner), { recursive: true })
  await gitIn(scratch, ["init", "-q", "--bare", "-b", "main", path])
  const work = mkdtempSync(join(scratch, "work-"))
  await gitIn(work, ["init", "-q", "-b", "main"])
  writeFileSync(join(work, "README"), "hello\n")
  await gitIn(work, ["add", "."])
  await gitIn(work, ["commit", "-q", "-m", "first"])
  await gitIn(work, ["push", "-q", path, "main"])
  return { path, work }
}

const exited = (child: ChildProcess) => new Promise<void>((done) => child.once("close", () => done()))

/**
 * A push killed mid-way, for real: `git receive-pack` gets the commands and half of the pack, is
 * SIGKILLed once it has made its quarantine, then its input ends (unpack-objects stops).
 */
const killedPush = async (repo: { path: string; work: string }) => {
  writeFileSync(join(repo.work, "blob.bin"), randomBytes(256 * 1024))
  await gitIn(repo.work, ["add", "."])
  await gitIn(repo.work, ["commit", "-q", "-m", "second"])
  const head = await gitIn(repo.work, ["rev-parse", "HEAD"])
  const base = await gitIn(repo.work, ["rev-parse", "HEAD~1"])
  const pack = await new Promise<Buffer>((done, fail) => {
    const packer = spawn("git", ["pack-objects", "--stdout", "--revs"], { cwd: repo.work, env: gitEnv() })
    const out: Array<Buffer> = []
    packer.stdout.on("data", (d: Buffer) => out.push(d))
    packer.on("error", fail)
    packer.on("close", () => done(Buffer.concat(out)))
    packer.stdin.end(`${head}\n^${base}\n`)
  })
  const command = `${base} ${head} refs/heads/main\0 report-status\n`
  const body = Buffer.concat([Buffer.from(`${(command.length + 4).toString(16).padStart(4, "0")}${command}0000`), pack])
  const before = quarantines(repo.path)
  const receiver = spawn("git", ["receive-pack", "--stateless-rpc", repo.path], {
    env: gitEnv(),
    stdio: ["pipe", "ignore", "ignore"]
  })
  const done = exited(receiver)
  receiver.stdin.on("error", () => {})
  receiver.stdin.write(body.subarray(0, body.length >> 1))
  let created: string | undefined
  for (let i = 0; i < 200 && created === undefined; i++) {
    created = quarantines(repo.path).find((q) => !before.includes(q))
    if (created === undefined) await sleep(25)
  }
  expect(created, "receive-pack made no quarantine").toBeDefined()
  await sleep(100)
  receiver.kill("SIGKILL")
  await done
  receiver.stdin.destroy()
  await sleep(300) // unpack-objects sees the end of its input and stops
  return created!
}

describe("sweepQuarantines", () => {
  it("removes the quarantines nobody touched since the start, keeps those being written, and nothing else", async () => {
    const root = join(scratch, "unit")
    const alice = await repository(root, "alice", "demo")
    const killed = await killedPush(alice)
    const objects = join(alice.path, "objects")
    // Emptied: index-pack took its partial pack with it.
    mkdirSync(join(objects, "tmp_objdir-incoming-empty1", "pack"), { recursive: true })
    // Left over, but written to again after the start: a push in progress.
    mkdirSync(join(objects, "tmp_objdir-incoming-busy01", "pack"), { recursive: true })
    const other = await repository(root, "bob", "other")
    writeFileSync(join(root, "bob", "notes.txt"), "not a repository\n")
    const refs = await gitIn(alice.path, ["show-ref"])

    await sleep(20)
    const startedAt = Date.now()
    await sleep(20)
    writeFileSync(join(objects, "tmp_objdir-incoming-busy01", "pack", "tmp_pack_x"), "…")
    mkdirSync(join(objects, "tmp_objdir-incoming-new001"))

    const sweep = await sweepQuarantines(root, startedAt)
    expect(sweep.repositories).toBe(2)
    expect(sweep.problems).toEqual([])
    expect([...sweep.removed].sort()).toEqual(
      [join(objects, killed), join(objects, "tmp_objdir-incoming-empty1")].sort()
    )
    expect(quarantines(alice.path)).toEqual(["tmp_objdir-incoming-busy01", "tmp_objdir-incoming-new001"])
    // The repositories are untouched: same refs, nothing missing.
    expect(await gitIn(alice.path, ["show-ref"])).toBe(refs)
    await gitIn(alice.path, ["fsck", "--no-progress"])
    await gitIn(other.path, ["fsck", "--no-progress"])
    expect(existsSync(join(root, "bob", "notes.txt"))).toBe(true)
  })

  it("is a no-op on a missing or empty repository root", async () => {
    expect(await sweepQuarantines(join(scratch, "absent"), Date.now())).toEqual({
      repositories: 0,
      removed: [],
      problems: []
    })
  })
})

describe("hearth serve", () => {
  it("removes what killed pushes left, once started", async () => {
    const dataDir = join(scratch, "data")
    const repo = await repository(join(dataDir, "repositories"), "alice", "demo")
    const killed = join(repo.path, "objects", await killedPush(repo))
    const scope = Effect.runSync(Scope.make())
    try {
      const adminUrl = process.env.TEST_DATABASE_URL
      const database =
        adminUrl !== undefined && adminUrl !== ""
          ? {
              HEARTH__database__DATABASE_URL: await Effect.runPromise(
                Scope.provide(freshPostgresDatabase(adminUrl), scope)
              )
            }
          : {}
      const port = await freePort()
      // Started after the push was killed, as a restart would be.
      const hearth = spawnHearth({ HEARTH__server__APP_DATA_PATH: dataDir, ...database }, ["serve"], port)
      const deadline = Date.now() + 90_000
      while (existsSync(killed) && Date.now() < deadline) await sleep(100)
      expect(existsSync(killed)).toBe(false)
      while (!hearth.output().stdout.includes("leftover push quarantine") && Date.now() < deadline) await sleep(100)
      expect(hearth.output().stdout).toContain(
        "removed 1 leftover push quarantine directory (objects/tmp_objdir-incoming-*)"
      )
      expect(await gitIn(repo.path, ["rev-parse", "main"])).toBe(await gitIn(repo.work, ["rev-parse", "HEAD~1"]))
      hearth.child.kill("SIGTERM")
      await within(hearth.exited, 30_000, "exit")
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }, 120_000)
})
