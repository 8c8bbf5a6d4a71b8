// Refs read from a repository's files (src/git/RefFiles.ts): git's own values, loose or packed,
// and no answer (the caller asks git) for a name that is not a plain `refs/…` path.
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readRefs, refFilesRead } from "../src/git/RefFiles.ts"
import { gitIn } from "./support/git.ts"

let work: string
let dir: string
let first: string
let second: string

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hearth-ref-files-"))
  const clone = join(work, "clone")
  await gitIn(work, ["init", "-q", "-b", "main", clone])
  writeFileSync(join(clone, "a.txt"), "a\n")
  await gitIn(clone, ["add", "a.txt"])
  await gitIn(clone, ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "a"])
  first = await gitIn(clone, ["rev-parse", "HEAD"])
  writeFileSync(join(clone, "b.txt"), "b\n")
  await gitIn(clone, ["add", "b.txt"])
  await gitIn(clone, ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "b"])
  second = await gitIn(clone, ["rev-parse", "HEAD"])
  dir = join(work, "bare.git")
  await gitIn(work, ["clone", "-q", "--bare", clone, dir])
  await gitIn(dir, ["update-ref", "refs/heads/old", first])
  await gitIn(dir, ["pack-refs", "--all"])
  await gitIn(dir, ["update-ref", "refs/pull/1/head", second])
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("readRefs", () => {
  it("reads loose and packed refs as git does, and leaves out absent ones", () => {
    const found = readRefs(dir, ["refs/heads/main", "refs/heads/old", "refs/pull/1/head", "refs/heads/none"])
    expect(found).toEqual(
      new Map([
        ["refs/heads/main", second],
        ["refs/heads/old", first],
        ["refs/pull/1/head", second]
      ])
    )
  })

  it("gives no answer for a name that is not a plain path under refs/", () => {
    for (const name of [
      "HEAD",
      "refs/heads/",
      "refs/heads//main",
      "refs/heads/./main",
      "refs/heads/../heads/main",
      "refs/heads/main/.",
      "refs/heads/main/.."
    ]) {
      expect(readRefs(dir, ["refs/heads/main", name]), name).toBeUndefined()
    }
  })

  it("reads a file again only when it is another one: moved, deleted, packed or made again, a ref's value is git's at once", async () => {
    const aged = (path: string) => utimesSync(path, new Date(Date.now() - 10_000), new Date(Date.now() - 10_000))
    await gitIn(dir, ["update-ref", "refs/heads/kept", second])
    aged(join(dir, "refs", "heads", "kept"))
    aged(join(dir, "packed-refs"))
    const refs = ["refs/heads/main", "refs/heads/kept", "refs/heads/old"]
    readRefs(dir, refs)
    const before = refFilesRead.count
    // Unchanged (and last changed over a second ago): answered without reading them.
    expect(readRefs(dir, refs)?.get("refs/heads/kept")).toBe(second)
    expect(readRefs(dir, refs)?.get("refs/heads/old")).toBe(first)
    expect(refFilesRead.count - before).toBe(0) // main and old from `packed-refs`, kept from its file
    // Moved, as git moves it (a new file renamed over the kept one): the new value.
    await gitIn(dir, ["update-ref", "refs/heads/kept", first])
    expect(readRefs(dir, refs)?.get("refs/heads/kept")).toBe(first)
    // Deleted, then made again: absent, then the new value.
    aged(join(dir, "refs", "heads", "kept"))
    readRefs(dir, refs)
    await gitIn(dir, ["update-ref", "-d", "refs/heads/kept"])
    expect(readRefs(dir, refs)?.has("refs/heads/kept")).toBe(false)
    await gitIn(dir, ["update-ref", "refs/heads/kept", second])
    expect(readRefs(dir, refs)?.get("refs/heads/kept")).toBe(second)
    // Written within the last second: not kept, read every time (its clock's tick may not be over).
    const fresh = refFilesRead.count
    readRefs(dir, ["refs/heads/kept"])
    readRefs(dir, ["refs/heads/kept"])
    expect(refFilesRead.count - fresh).toBe(2)
    // Packed (the loose file removed, `packed-refs` written anew): read from there.
    await gitIn(dir, ["pack-refs", "--all"])
    expect(readRefs(dir, refs)).toEqual(
      new Map([
        ["refs/heads/main", second],
        ["refs/heads/kept", second],
        ["refs/heads/old", first]
      ])
    )
    await gitIn(dir, ["update-ref", "refs/heads/old", second])
    expect(readRefs(dir, refs)?.get("refs/heads/old")).toBe(second)
  })
})
