// Which refs a push moved, from `git receive-pack` itself: after it updated the refs, receive-pack
// runs the post-receive hook with one line `<old> <new> <ref>` per ref it actually moved (refused
// and failed ones are not listed), and waits for it. The hook below writes those lines — after a
// header line the server chose (the event the push becomes, without its refs) — to the file
// `$HEARTH_PUSH_LOG`, atomically (a temporary file renamed), and the server publishes them once
// receive-pack has exited (src/repos/GitHttp.ts). That is exact even when several pushes to one
// repository overlap, which comparing the refs before and after would not be.
//
// The file is also the record a push leaves when the server dies between the refs moving and the
// event being published: at the next start every push log older than the process is published
// then (`leftoverPushLogs`) and removed. A push that moved nothing leaves no file.
//
// The hooks live in one directory that `core.hooksPath` points at for every push (Hearth runs no
// other hooks), beside Refusal.ts's pre-receive hook that refuses pushes over quota.
import { randomUUID } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { readdir, readFile, rm, stat } from "node:fs/promises"
import { join } from "node:path"

const POST_RECEIVE = `#!/bin/sh
# Written by Hearth: records the refs this push moved in $HEARTH_PUSH_LOG (src/git/PushLog.ts).
[ -n "$HEARTH_PUSH_LOG" ] || exit 0
{ printf '%s\\n' "$HEARTH_PUSH_HEADER"; cat; } > "$HEARTH_PUSH_LOG.tmp" && mv "$HEARTH_PUSH_LOG.tmp" "$HEARTH_PUSH_LOG"
`

/** Writes the post-receive hook into `dir` (kept as it is when already current); returns `dir`. */
export const installPushLogHook = (dir: string): string => {
  const file = join(dir, "post-receive")
  if (!existsSync(file) || readFileSync(file, "utf8") !== POST_RECEIVE) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(file, POST_RECEIVE, { mode: 0o755 })
  }
  chmodSync(file, 0o755)
  return dir
}

/** Where push logs are kept: `<APP_DATA_PATH>/pushes`. */
export const pushLogDir = (appDataPath: string) => join(appDataPath, "pushes")

export interface PushLog {
  /** Where the hook writes (a file of `logDir` nobody else uses). */
  readonly file: string
  /** For git: hooks from `hooksDir`, the log file and its header. */
  readonly env: Record<string, string>
}

/** A new push log in `logDir` whose header is `header` (one line of JSON). */
export const newPushLog = (hooksDir: string, logDir: string, header: unknown): PushLog => {
  mkdirSync(logDir, { recursive: true })
  const file = join(logDir, `${randomUUID()}.push`)
  return {
    file,
    env: {
      GIT_CONFIG_COUNT: "1",
      GIT_CONFIG_KEY_0: "core.hooksPath",
      GIT_CONFIG_VALUE_0: hooksDir,
      HEARTH_PUSH_LOG: file,
      HEARTH_PUSH_HEADER: JSON.stringify(header)
    }
  }
}

export interface RefMove {
  readonly ref: string
  readonly before: string
  readonly after: string
}

/** A push log's header and refs, or `undefined` when the push moved nothing (no file) or it is damaged. */
export const parsePushLog = (text: string): { readonly header: unknown; readonly refs: Array<RefMove> } | undefined => {
  const [first, ...lines] = text.split("\n")
  let header: unknown
  try {
    header = JSON.parse(first ?? "")
  } catch {
    return undefined
  }
  const refs: Array<RefMove> = []
  for (const line of lines) {
    const match = /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)$/.exec(line.trim())
    if (match !== null) refs.push({ before: match[1]!, after: match[2]!, ref: match[3]! })
  }
  return { header, refs }
}

/** Reads and removes a push log; `undefined` when there is none (the push moved nothing). */
export const takePushLog = async (file: string) => {
  let text: string
  try {
    text = await readFile(file, "utf8")
  } catch {
    return undefined
  }
  await rm(file, { force: true })
  return parsePushLog(text)
}

/**
 * The push logs in `logDir` written before `startedAt` (epoch ms): pushes whose server died before
 * publishing them. Each is returned with a `remove` to call once it is published.
 */
export const leftoverPushLogs = async (logDir: string, startedAt: number) => {
  let names: Array<string>
  try {
    names = await readdir(logDir)
  } catch {
    return []
  }
  const found: Array<{
    readonly file: string
    readonly text: string
    readonly at: number
    readonly remove: () => Promise<void>
  }> = []
  for (const name of names) {
    const file = join(logDir, name)
    try {
      const at = (await stat(file)).mtimeMs
      if (at >= startedAt) continue
      const remove = () => rm(file, { force: true })
      // A temporary file is a hook that was cut off before its rename: nothing to publish.
      if (name.endsWith(".tmp")) await remove()
      else found.push({ file, text: await readFile(file, "utf8"), at, remove })
    } catch {
      // gone meanwhile
    }
  }
  return found.sort((a, b) => a.at - b.at)
}

/** The refs that differ between two listings (`before` and `after` of a fetch), as moves. */
export const refMoves = (
  before: ReadonlyArray<{ readonly ref: string; readonly sha: string }>,
  after: ReadonlyArray<{ readonly ref: string; readonly sha: string }>
): Array<RefMove> => {
  const ZERO = "0".repeat(40)
  const old = new Map(before.map((r) => [r.ref, r.sha]))
  const moves: Array<RefMove> = []
  for (const { ref, sha } of after) {
    const was = old.get(ref)
    old.delete(ref)
    if (was !== sha) moves.push({ ref, before: was ?? ZERO, after: sha })
  }
  for (const [ref, sha] of old) moves.push({ ref, before: sha, after: ZERO })
  return moves
}
