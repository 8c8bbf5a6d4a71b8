// A new bare repository appears whole (src/git/Git.ts `initBare`): made beside its path and renamed
// into place, so that a reader never finds a directory that is not yet a repository. The fuzz guard
// found the wiki's first page read while another request's `git init` had made only the directory.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { initBare } from "../src/git/Git.ts"

const work = mkdtempSync(join(tmpdir(), "hearth-init-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe("initBare", () => {
  it("never shows the directory before it is a repository, and leaves nothing beside it", async () => {
    let halfMade = 0
    for (let i = 0; i < 20; i++) {
      const path = join(work, "owner", `repo${i}.git`)
      let done = false
      const made = Effect.runPromise(initBare(path, "main")).finally(() => {
        done = true
      })
      // Look as often as the event loop lets us while git runs.
      while (!done) {
        if (existsSync(path) && !existsSync(join(path, "HEAD"))) halfMade++
        await new Promise((r) => setImmediate(r))
      }
      await made
      expect(existsSync(join(path, "HEAD"))).toBe(true)
    }
    expect(halfMade).toBe(0)
    expect(readdirSync(join(work, "owner")).filter((name) => name.includes(".init-"))).toEqual([])
  })

  it("initialises an existing repository in place, as git does", async () => {
    const path = join(work, "again.git")
    await Effect.runPromise(initBare(path, "main"))
    await Effect.runPromise(initBare(path, "main"))
    expect(existsSync(join(path, "HEAD"))).toBe(true)
    expect(readdirSync(work).filter((name) => name.includes(".init-"))).toEqual([])
  })
})
