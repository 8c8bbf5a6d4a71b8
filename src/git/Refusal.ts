// A push refused before any ref moves, the way a pre-receive hook refuses one: receive-pack takes
// the pack into quarantine, runs the hook below, which prints the reason (git shows it to the
// pusher as `remote: …`, and each ref as "pre-receive hook declined") and fails; receive-pack then
// drops the quarantined objects and changes nothing. A push that only deletes refs passes.
//
// The hook lives in the directory every push's `core.hooksPath` points at (beside PushLog.ts's
// post-receive hook) and refuses only when `$HEARTH_PUSH_REFUSED` is set: `refusingEnv` sets it
// for a push that is to be refused. With `$HEARTH_PUSH_READER` (a pusher who may only read; see
// src/repos/GitHttp.ts) it refuses every ref but AGit's `refs/for/…` (src/git/ProcReceive.ts).
// Otherwise, when `$HEARTH_HOOK_URL` is set, it asks the server about each ref (src/git/Hook.ts:
// branch and tag protection).
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const PRE_RECEIVE = `#!/bin/sh
# Written by Hearth: refuses a push that creates or updates a ref, printing $HEARTH_PUSH_REFUSED.
# A push that only deletes refs (every new id all zeros) is let through, and every push when unset.
if [ -n "$HEARTH_PUSH_REFUSED" ]; then
  while read old new ref; do
    case "$new" in
      *[!0]*) printf '%s\\n' "$HEARTH_PUSH_REFUSED" >&2; exit 1 ;;
    esac
  done
  exit 0
fi
# The default branch cannot be deleted by a push ($HEARTH_DEFAULT_BRANCH; Forgejo's message).
[ -n "$HEARTH_HOOK_URL" ] || [ -n "$HEARTH_DEFAULT_BRANCH" ] || [ -n "$HEARTH_PUSH_READER" ] || exit 0
input=$(cat)
# A pusher who may read the repository but not write its code may only open pull requests
# (refs/for/…, AGit): any other ref is refused, with Forgejo's messages ($HEARTH_PUSH_READER is the
# pusher's name, $HEARTH_PUSH_REPO the repository's owner/name).
if [ -n "$HEARTH_PUSH_READER" ]; then
  while read old new ref; do
    case "$ref" in
      refs/for/*|"") ;;
      refs/heads/*)
        branch=\${ref#refs/heads/}
        printf "Hearth: User '%s' is not allowed to push to branch '%s' in '%s'.\\n" "$HEARTH_PUSH_READER" "$branch" "$HEARTH_PUSH_REPO" >&2
        printf "If you instead wanted to create a pull request to the branch '%s', please use:\\n" "$branch" >&2
        printf 'git push origin HEAD:refs/for/%s/choose-a-descriptor\\n' "$branch" >&2
        echo "You might want to replace 'origin' with the name of your Git remote if it is different from origin. You can freely choose the descriptor to set it to a topic." >&2
        echo "You can learn about creating pull requests with AGit in the docs: https://forgejo.org/docs/latest/user/git-cli/agit-support/" >&2
        exit 1 ;;
      *) echo "Hearth: User permission denied for writing." >&2; exit 1 ;;
    esac
  done <<EOF
$input
EOF
fi
if [ -n "$HEARTH_DEFAULT_BRANCH" ]; then
  while read old new ref; do
    [ "$ref" = "refs/heads/$HEARTH_DEFAULT_BRANCH" ] || continue
    case "$new" in
      *[!0]*) ;;
      *) printf 'Hearth: branch %s is the default branch and cannot be deleted\\n' "$HEARTH_DEFAULT_BRANCH" >&2; exit 1 ;;
    esac
  done <<EOF
$input
EOF
fi
# Then, in a repository with protection rules, the push's refs are checked by the Hearth server
# (src/git/Hook.ts): branch and tag protection, with the quarantined objects. An empty answer
# lets the push through.
[ -n "$HEARTH_HOOK_URL" ] || exit 0
command -v curl >/dev/null 2>&1 || {
  echo "Hearth: this repository has protection rules, and the server cannot check pushes against them: curl is not installed on it" >&2
  exit 1
}
answer=$(printf '%s\\n' "$input" | curl --silent --fail --max-time 600 --data-binary @- -H "Content-Type: text/plain" \\
  -H "X-Hearth-Session: $HEARTH_HOOK_SESSION" \\
  -H "X-Git-Object-Directory: $GIT_OBJECT_DIRECTORY" \\
  -H "X-Git-Alternate-Object-Directories: $GIT_ALTERNATE_OBJECT_DIRECTORIES" \\
  -H "X-Git-Quarantine-Path: $GIT_QUARANTINE_PATH" \\
  "$HEARTH_HOOK_URL") || {
  echo "Hearth: this push could not be checked against the repository's protection rules; try again" >&2
  exit 1
}
[ -z "$answer" ] && exit 0
printf '%s\\n' "$answer" >&2
exit 1
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
