// One Hearth process per data directory: the embedded database has no locking of its own, and
// two writers would corrupt it. The lock is a file created with O_EXCL holding the owner's pid;
// a lock left by a process that no longer runs is taken over.
import { Data, Effect } from "effect"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { hostname } from "node:os"
import { join } from "node:path"

export class DataDirLocked extends Data.TaggedError("DataDirLocked")<{ readonly message: string }> {}

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
    writeSync(fd, `${process.pid}\n${hostname()}\n`)
    closeSync(fd)
    return true
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false
    throw e
  }
}

/** Holds `<dir>/hearth.lock` for the scope's lifetime; fails fast naming the holder. */
export const acquire = (dir: string) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        mkdirSync(dir, { recursive: true })
        const file = join(dir, "hearth.lock")
        for (let attempt = 0; attempt < 2; attempt++) {
          if (tryCreate(file)) return file
          const [pidText = "", host = ""] = readFileSync(file, "utf8").split("\n")
          const pid = Number(pidText)
          if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && host === hostname() && isRunning(pid)) {
            throw new DataDirLocked({
              message: `the data directory ${dir} is in use by another Hearth process (pid ${pid}); ` +
                `stop it first, or point [server] APP_DATA_PATH elsewhere`
            })
          }
          rmSync(file, { force: true }) // stale: its owner is gone
        }
        throw new DataDirLocked({ message: `could not lock the data directory ${dir}` })
      },
      catch: (e) => e instanceof DataDirLocked ? e : new DataDirLocked({ message: `cannot lock ${dir}: ${String(e)}` })
    }),
    (file) => Effect.sync(() => rmSync(file, { force: true }))
  )
