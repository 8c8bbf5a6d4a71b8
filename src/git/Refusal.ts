// A push refused before any ref moves, the way a pre-receive hook refuses one: receive-pack takes
// the pack into quarantine, runs the hook below, which prints the reason (git shows it to the
// pusher as `remote: …`, and each ref as "pre-receive hook declined") and fails; receive-pack then
// drops the quarantined objects and changes nothing. A push that only deletes refs passes.
//
// The hook lives in the directory every push's `core.hooksPath` points at (beside PushLog.ts's
// post-receive hook) and refuses only when `$HEARTH_PUSH_REFUSED` is set: `refusingEnv` sets it
// for a push that is to be refused.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const PRE_RECEIVE = `#!/bin/sh
# Written by Hearth: refuses a push that creates or updates a ref, printing $HEARTH_PUSH_REFUSED.
# A push that only deletes refs (every new id all zeros) is let through, and every push when unset.
[ -n "$HEARTH_PUSH_REFUSED" ] || exit 0
while read old new ref; do
  case "$new" in
    *[!0]*) printf '%s\\n' "$HEARTH_PUSH_REFUSED" >&2; exit 1 ;;
  esac
done
exit 0
`

/** Writes the refusing hook into `dir` (kept as it is when already current); returns `dir`. */
export const installRefusingHook = (dir: string): string => {
  const file = join(dir, "pre-receive")
  if (!existsSync(file) || readFileSync(file, "utf8") !== PRE_RECEIVE) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(file, PRE_RECEIVE, { mode: 0o755 })
  }
  chmodSync(file, 0o755)
  return dir
}

/** The environment for `git receive-pack` that makes it refuse the push with `message`. */
export const refusingEnv = (hooksDir: string, message: string): Record<string, string> => ({
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "core.hooksPath",
  GIT_CONFIG_VALUE_0: hooksDir,
  HEARTH_PUSH_REFUSED: message
})
