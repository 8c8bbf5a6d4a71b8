// Leftovers of interrupted pushes. `git receive-pack` receives a push into a quarantine directory,
// `objects/tmp_objdir-incoming-XXXXXX`, and moves the objects into the repository only once the
// push is accepted; it removes the directory itself when it exits or is asked to stop, but not
// when it is killed outright (SIGKILL, a crash, the machine going down). What is left is a
// directory that is empty (index-pack removed its partial pack when its input ended) or holds the
// objects of a push that never happened: nothing refers to them.
//
// At start-up every quarantine that nobody has touched since this process started is such a
// leftover and is removed: no push of this process can be among them (its quarantines are created
// later), and one written to since belongs to a push in progress elsewhere (a process sharing the
// storage), which is left alone. That is also what lets the sweep run beside the server instead
// of delaying its start.
//
// Cost: one directory listing of each repository's `objects/` (the fan-out directories plus a few
// names), 16 at a time; nothing else is read unless a leftover is found. For 1,000 repositories
// with all 256 fan-out directories: 0.17 s with a warm cache, 0.5 s cold, measured on a busy
// 2-core machine — in the background, so start-up does not wait for it.

import { lstat, readdir, rm } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"

const QUARANTINE_PREFIX = "tmp_objdir-incoming-"
const IN_FLIGHT = 16

export interface QuarantineSweep {
  /** Repositories whose `objects/` was looked at. */
  readonly repositories: number
  /** The quarantine directories removed (absolute paths). */
  readonly removed: ReadonlyArray<string>
  /** Those that could not be looked at or removed, with why (e.g. permissions). */
  readonly problems: ReadonlyArray<string>
}

const listing = async (path: string): Promise<Array<string>> => {
  try {
    return await readdir(path)
  } catch {
    return [] // not a directory, or gone meanwhile
  }
}

/** The latest change (mtime or ctime) of `path` and of everything under it; links are not followed. */
const lastChange = async (path: string): Promise<number> => {
  const stat = await lstat(path)
  let latest = Math.max(stat.mtimeMs, stat.ctimeMs)
  if (stat.isDirectory()) {
    for (const name of await readdir(path)) latest = Math.max(latest, await lastChange(join(path, name)))
  }
  return latest
}

/** Runs `work` on every item, `limit` at a time. */
const eachLimited = async <A>(items: ReadonlyArray<A>, limit: number, work: (item: A) => Promise<void>) => {
  let next = 0
  const worker = async () => {
    while (next < items.length) await work(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

/**
 * Removes the quarantine directories under `root` (`{owner}/{name}.git/objects/`) that nothing has
 * changed since `startedAt` (epoch milliseconds). Never fails: what cannot be read or removed is
 * reported in `problems`.
 */
export const sweepQuarantines = async (root: string, startedAt: number): Promise<QuarantineSweep> => {
  const repositories: Array<string> = []
  for (const owner of await listing(root)) {
    for (const name of await listing(join(root, owner))) {
      if (name.endsWith(".git")) repositories.push(join(root, owner, name, "objects"))
    }
  }
  const removed: Array<string> = []
  const problems: Array<string> = []
  await eachLimited(repositories, IN_FLIGHT, async (objects) => {
    for (const name of await listing(objects)) {
      if (!name.startsWith(QUARANTINE_PREFIX)) continue
      const path = join(objects, name)
      try {
        if ((await lastChange(path)) >= startedAt) continue
        await rm(path, { recursive: true, force: true })
        removed.push(path)
      } catch (error) {
        problems.push(`${path}: ${(error as Error).message}`)
      }
    }
  })
  return { repositories: repositories.length, removed, problems }
}

/** The start-up clean-up: sweeps `root` and says in the log what it removed or could not. */
export const removeLeftoverQuarantines = (root: string, startedAt: number) =>
  Effect.gen(function* () {
    const sweep = yield* Effect.promise(() => sweepQuarantines(root, startedAt))
    if (sweep.removed.length > 0) {
      yield* Effect.logInfo(
        `removed ${sweep.removed.length} leftover push quarantine director${sweep.removed.length === 1 ? "y" : "ies"} ` +
          `(objects/${QUARANTINE_PREFIX}*) of pushes interrupted before this start`
      )
    }
    for (const problem of sweep.problems) {
      yield* Effect.logWarning(`could not remove a leftover push quarantine directory: ${problem}`)
    }
    return sweep
  })
