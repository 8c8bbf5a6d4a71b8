// One Hearth process per data directory: the embedded database has no locking of its own, and
// two writers would corrupt it. The lock is `<dir>/hearth.lock`, created with O_EXCL, holding the
// owner's pid and host name; it is removed when the scope closes (clean shutdown).
//
// A lock whose owner is gone is taken over: a pid that no longer runs on this host, a lock with
// our own pid (a container restarted as pid 1 after a crash), or a lock written on another host
// (a container gets a new host name when it is recreated; a data dir shared between live hosts is
// not supported). Known gap: two processes taking over the same stale lock at the very same
// moment could both succeed — the window is between one's read and the other's create.

import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { hostname } from "node:os"
import { join, resolve } from "node:path"
import { Data, Effect } from "effect"

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{ readonly message: string }> {}

/** Lock files held by this process: a second acquisition in-process must fail too. */
const held = new Set<string>()

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

const tryCreate = (file: string): boolean => {
  try {
    const fd = openSync(file, "wx", 0o644)
    try {
      writeSync(fd, `${process.pid}\n${hostname()}\n`)
    } finally {
      closeSync(fd)
    }
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  }
}

const inUse = (dir: string, holder: string) =>
  new DataDirLocked({
    message:
      `the data directory ${dir} is in use by another Hearth process (${holder}); ` +
      `stop it first, or point [server] APP_DATA_PATH elsewhere`
  })

/** Holds `<dir>/hearth.lock` for the scope's lifetime; fails fast naming the holder. */
export const acquire = (dir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dir, { recursive: true })
        const file = resolve(join(dir, "hearth.lock"))
        if (held.has(file)) throw inUse(dir, `this process, pid ${process.pid}`)
        for (let attempt = 0; attempt < 2; attempt++) {
          if (tryCreate(file)) {
            held.add(file)
            return file
          }
          let content = ""
          try {
            content = readFileSync(file, "utf8")
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === "ENOENT") continue // released meanwhile
            throw e
          }
          const [pidText = "", host = ""] = content.split("\n")
          const pid = Number(pidText)
          if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && host === hostname() && isRunning(pid)) {
            throw inUse(dir, `pid ${pid}`)
          }
          rmSync(file, { force: true }) // stale: its owner is gone
        }
        throw new DataDirLocked({ message: `could not lock the data directory ${dir}` })
      },
      catch: (e) =>
        e instanceof DataDirLocked ? e : new DataDirLocked({ message: `cannot lock ${dir}: ${String(e)}` })
    }),
    (file) =>
      Effect.sync(() => {
        held.delete(file)
        rmSync(file, { force: true })
      })
  )
