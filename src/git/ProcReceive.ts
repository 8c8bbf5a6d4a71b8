// git's proc-receive hook for AGit pull requests (Forgejo's `gitea hook proc-receive`, cmd/hook.go;
// git's receive-pack "proc-receive" protocol, githooks(5)). With `receive.procReceiveRefs=refs/for`
// (Git.ts, every git process) receive-pack does not create a `refs/for/…` ref a push names: once
// the pushed objects are out of quarantine it hands those commands to this hook, which answers
// for each one. The hook below speaks the protocol's pkt-lines itself (POSIX sh, dd, curl):
//
//   git  → hook  version=1\0push-options   (the feature offered only when the client sent `-o`)
//   hook → git   version=1\0push-options   (taken when offered), flush
//   git  → hook  `<old> <new> <ref>` per command, flush; then the push options, flush
//   hook → git   per command `ok <ref>` + `option refname|old-oid|new-oid|forced-update`, or
//                `ng <ref> <reason>`, then flush
//
// and sends the commands and options to the Hearth server (the loopback server of src/git/Hook.ts,
// with the push's sealed session), which decides and answers with the messages for the pusher
// (printed on stderr: git shows them as `remote: …`), a separator line, then the pkt-lines to
// return to git. receive-pack then reports each ref to the client under the ref the hook named
// (`refs/pull/{n}/head`), and the post-receive hook sees that ref too (src/git/PushLog.ts).
//
// A shell hook rather than a Node script, measured on a busy 2-core machine in CPU time per run:
// 44 ms for this hook with its curl request (curl alone: 11 ms), against 128 ms for merely
// starting Node. Only pushes to `refs/for/…` run it; every other push costs nothing more.
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** The line between the messages for the pusher and the pkt-lines for git in the server's answer. */
export const REPORT_SEPARATOR = "--hearth-proc-receive-report--"

const PROC_RECEIVE = `#!/bin/sh
# Written by Hearth: AGit pull requests from pushes to refs/for/<branch> (src/git/ProcReceive.ts).
# One pkt-line's payload on stdout; status 1 for a flush-pkt.
pkt() {
  len=$(dd bs=1 count=4 2>/dev/null)
  case "$len" in
    0000) return 1 ;;
    [0-9a-f][0-9a-f][0-9a-f][0-9a-f]) ;;
    *) echo "Hearth: unexpected input from git (proc-receive)" >&2; exit 1 ;;
  esac
  n=$((0x$len - 4))
  [ "$n" -gt 0 ] && dd bs=1 count="$n" 2>/dev/null | tr '\\000\\n' '  '
  return 0
}
version=$(pkt) || exit 1
while pkt >/dev/null; do :; done
case "$version" in
  "version=1 "*push-options*) options=1; printf '001bversion=1\\000push-options\\n0000' ;;
  version=1*) options=; printf '000eversion=1\\n0000' ;;
  *) echo "Hearth: unsupported proc-receive protocol: $version" >&2; exit 1 ;;
esac
input=
while line=$(pkt); do input="$input$line
"; done
input="$input
"
if [ -n "$options" ]; then
  while line=$(pkt); do input="$input$line
"; done
fi
if [ -z "$HEARTH_AGIT_URL" ]; then
  echo "Hearth: this push cannot open pull requests: refs/for/… takes a user's push to a repository's code (not a deploy key's, nor a wiki's)" >&2
  exit 1
fi
command -v curl >/dev/null 2>&1 || {
  echo "Hearth: pull requests cannot be opened by pushing: curl is not installed on the server" >&2
  exit 1
}
answer=$(printf '%s' "$input" | curl --silent --fail --max-time 600 --data-binary @- -H "Content-Type: text/plain" \\
  -H "X-Hearth-Session: $HEARTH_AGIT_SESSION" "$HEARTH_AGIT_URL") || {
  echo "Hearth: the pull request could not be opened or updated; try again" >&2
  exit 1
}
messages=\${answer%%${REPORT_SEPARATOR}*}
[ -n "$messages" ] && printf '%s\\n' "$messages" >&2
printf '%s' "\${answer#*${REPORT_SEPARATOR}
}"
`

/** Writes the proc-receive hook into `dir` (kept as it is when already current); returns `dir`. */
export const installProcReceiveHook = (dir: string): string => {
  const file = join(dir, "proc-receive")
  if (!existsSync(file) || readFileSync(file, "utf8") !== PROC_RECEIVE) {
    mkdirSync(dir, { recursive: true })
    writeFileSync(file, PROC_RECEIVE, { mode: 0o755 })
  }
  chmodSync(file, 0o755)
  return dir
}

/** A command the hook received: a ref under `refs/for/` and the commits it moves between. */
export interface ProcCommand {
  readonly oldSha: string
  readonly newSha: string
  readonly ref: string
}

/** The commands and push options the hook sent (its body: commands, an empty line, options). */
export const parseProcReceiveInput = (
  text: string
): { readonly commands: Array<ProcCommand>; readonly options: Array<string> } => {
  const at = text.indexOf("\n\n")
  const head = at < 0 ? text : text.slice(0, at)
  const tail = at < 0 ? "" : text.slice(at + 2)
  const commands = head
    .split("\n")
    .map((line) => /^([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\S+)\s*$/.exec(line))
    .flatMap((m) => (m === null ? [] : [{ oldSha: m[1]!, newSha: m[2]!, ref: m[3]! }]))
  const options = tail
    .split("\n")
    .map((line) => line.replace(/ $/, ""))
    .filter((line) => line !== "")
  return { commands, options }
}

/** What the server decided for one command. */
export type ProcResult =
  | {
      readonly ok: true
      readonly ref: string
      /** The ref the command became (`refs/pull/{n}/head`), its old and new commits. */
      readonly refname: string
      readonly oldSha: string
      readonly newSha: string
      readonly forced?: boolean
    }
  | { readonly ok: false; readonly ref: string; readonly reason: string }

const pkt = (payload: string) => {
  const length = Buffer.byteLength(payload) + 4
  return `${length.toString(16).padStart(4, "0")}${payload}`
}

/** The server's answer to the hook: the pusher's messages, the separator, the report's pkt-lines. */
export const procReceiveAnswer = (results: ReadonlyArray<ProcResult>, messages: ReadonlyArray<string>): string => {
  const lines: Array<string> = []
  for (const result of results) {
    if (!result.ok) {
      // A reason is one line (git cuts it there anyway).
      lines.push(pkt(`ng ${result.ref} ${result.reason.replace(/\s*\n\s*/g, " ")}`))
      continue
    }
    lines.push(pkt(`ok ${result.ref}`), pkt(`option refname ${result.refname}`))
    if (!/^0+$/.test(result.oldSha)) lines.push(pkt(`option old-oid ${result.oldSha}`))
    lines.push(pkt(`option new-oid ${result.newSha}`))
    if (result.forced === true) lines.push(pkt("option forced-update"))
  }
  return `${messages.join("\n")}${REPORT_SEPARATOR}\n${lines.join("")}0000`
}
