// What git's fsck checks in a `.gitmodules` file (fsck.c `fsck_blob`, `fsck_gitmodules_fn`), for the
// commits Hearth writes. receive-pack refuses a push carrying a `.gitmodules` that fails these
// checks (receive.fsckObjects, src/git/Git.ts), because `git clone --recurse-submodules` of it can
// run commands or write outside the clone with older git versions: submodule names with `..`
// (CVE-2018-11235), URLs and paths that read as options (CVE-2018-17456), `update = !command`
// (CVE-2019-19604), URLs that fool credential helpers (CVE-2020-5260, CVE-2020-11008). The API
// must not be a way around that, so `Write.commit` runs `checkChanges` on every commit it makes.
//
// git itself parses the file (`git config --list`, the config parser fsck uses); the rules below
// are applied to the entries it read, and follow git's fsck.c and submodule-config.c
// (`check_submodule_name`, `check_submodule_url`, `looks_like_command_line_option`,
// `parse_submodule_update_type`). Whether a finding refuses follows receive-pack: git's default
// severity, unless Hearth's git configuration (HEARTH_GIT_CONFIG) sets `receive.fsck.<id>`.
import { Effect } from "effect"
import * as Git from "./Git.ts"
import * as Paths from "./Paths.ts"
import type { FileChange } from "./Write.ts"

/** fsck's message ids for `.gitmodules` content. */
export type FsckId = "gitmodulesName" | "gitmodulesUrl" | "gitmodulesPath" | "gitmodulesUpdate" | "gitmodulesParse"

/** One thing fsck reports about a `.gitmodules` file, in git's words. */
export interface Finding {
  readonly id: FsckId
  readonly message: string
}

/** One `section.subsection.key` git read, as `git config --list` prints it; `null`: a bare `key` (no `=`). */
export interface ConfigEntry {
  readonly key: string
  readonly value: string | null
}

/**
 * git's default severity on receive (fsck.c's message table): gitmodulesParse is only "info",
 * reported to the pusher as a warning while the push goes through, so a file git cannot parse
 * goes in through the API too; the entries git read before the line it could not parse are
 * still checked, as fsck checks them.
 */
const DEFAULT_SEVERITY: Record<FsckId, "error" | "info"> = {
  gitmodulesName: "error",
  gitmodulesUrl: "error",
  gitmodulesPath: "error",
  gitmodulesUpdate: "error",
  gitmodulesParse: "info"
}

/** Whether receive-pack refuses a push over `id`: `receive.fsck.<id>` from Hearth's git config, or git's default. */
export const refusedOnPush = (id: FsckId): boolean => {
  const set = Git.HEARTH_GIT_CONFIG.find(([key]) => key.toLowerCase() === `receive.fsck.${id.toLowerCase()}`)
  return (set?.[1] ?? DEFAULT_SEVERITY[id]).toLowerCase() === "error"
}

// ---------------------------------------------------------------------------------------------
// The rules, on values as git parsed them

/** `looks_like_command_line_option`: git would read it as an option when it passes it on. */
export const looksLikeOption = (value: string): boolean => value.startsWith("-")

const isDirSep = (c: string | undefined) => c === "/" || c === "\\"

/** `check_submodule_name`: not empty, and no `..` component (with `/` or `\` as separators, on every platform). */
export const isAllowedSubmoduleName = (name: string): boolean => {
  if (name === "") return false
  for (let i = 0; i <= name.length; i++) {
    // A component starts at the beginning and after each separator.
    if (i > 0 && !isDirSep(name[i - 1])) continue
    if (name[i] === "." && name[i + 1] === "." && (i + 2 === name.length || isDirSep(name[i + 2]))) return false
  }
  return true
}

/**
 * `parse_submodule_update_type(value) == SM_UPDATE_COMMAND`: `!` runs the rest as a shell command
 * (the other values, none, checkout, rebase and merge, name strategies).
 */
export const isUpdateCommand = (value: string): boolean => value.startsWith("!")

const startsWithDotSlash = (s: string) => s[0] === "." && isDirSep(s[1])
const startsWithDotDotSlash = (s: string) => s[0] === "." && startsWithDotSlash(s.slice(1))

/**
 * Whether `url_decode_mem` yields a line break: the part before the first `:` (a scheme) is kept
 * as it is, the rest has `%XX` decoded (`%00` is left alone, which cannot matter here).
 */
const decodesToNewline = (text: string): boolean => {
  if (text.includes("\n")) return true
  const colon = text.indexOf(":")
  return /%0a/i.test(colon > 0 ? text.slice(colon) : text)
}

/** `url_to_curl_url`: the URL git-remote-curl would get, for the transports it implements. */
const curlUrl = (url: string): string | undefined => {
  for (const scheme of ["http", "https", "ftp", "ftps"]) {
    if (url.startsWith(`${scheme}::`)) return url.slice(scheme.length + 2)
  }
  return /^(?:https?|ftps?):\/\//.test(url) ? url : undefined
}

/**
 * `credential_from_url_gently(…, quiet) == 0 && *c.host`: the URL names a scheme and a non-empty
 * host, and none of its parts (user, password, host, path) decodes to a line break, which would
 * let the URL inject lines into the credential helper protocol.
 */
const credentialUrlIsSound = (url: string): boolean => {
  const schemeEnd = url.indexOf("://")
  if (schemeEnd <= 0) return false
  const rest = url.slice(schemeEnd + 3)
  const at = rest.indexOf("@")
  const colon = rest.indexOf(":")
  // A query or fragment marker before the first slash ends the host too.
  const marker = rest.search(/[/?#]/)
  const slash = marker === -1 ? rest.length : marker
  // The scheme is kept as it is; user, password, host and path are decoded.
  const decoded: Array<string> = []
  let host = 0
  if (at !== -1 && at < slash) {
    if (colon === -1 || at <= colon) decoded.push(rest.slice(0, at))
    else decoded.push(rest.slice(0, colon), rest.slice(colon + 1, at))
    host = at + 1
  }
  const hostText = rest.slice(host, slash)
  decoded.push(hostText, rest.slice(slash).replace(/^\/+/, ""))
  return hostText !== "" && !url.slice(0, schemeEnd).includes("\n") && !decoded.some(decodesToNewline)
}

/** `check_submodule_url`. */
export const isAllowedSubmoduleUrl = (url: string): boolean => {
  if (looksLikeOption(url)) return false
  if (startsWithDotSlash(url) || startsWithDotDotSlash(url) || url.startsWith("git://")) {
    // May be appended to an http URL and decoded: no line breaks.
    if (decodesToNewline(url)) return false
    // `../` components that climb past the root could replace the host (CVE-2020-11008).
    let rest = url
    let dotdots = 0
    for (;;) {
      if (startsWithDotDotSlash(rest)) {
        dotdots++
        rest = rest.slice(3)
      } else if (startsWithDotSlash(rest)) {
        rest = rest.slice(2)
      } else {
        break
      }
    }
    return !(dotdots > 0 && (rest[0] === ":" || rest[0] === "/"))
  }
  const curl = curlUrl(url)
  return curl === undefined || credentialUrlIsSound(curl)
}

/** A value as a person can read it in a message: quoted, control characters escaped. */
const shown = (value: string) =>
  `"${value.replace(/[\x00-\x1f\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`)}"`

/** `fsck_gitmodules_fn` for one entry: what fsck reports about it, in git's words. */
export const entryFindings = (entry: ConfigEntry): ReadonlyArray<Finding> => {
  // parse_config_key(var, "submodule", &subsection, …, &key): only `submodule.<name>.<key>`; the
  // name may hold dots, the key is after the last one.
  if (!entry.key.startsWith("submodule.")) return []
  const rest = entry.key.slice("submodule.".length)
  const lastDot = rest.lastIndexOf(".")
  if (lastDot === -1) return []
  const name = rest.slice(0, lastDot)
  const key = rest.slice(lastDot + 1)
  const value = entry.value
  const found: Array<Finding> = []
  if (!isAllowedSubmoduleName(name))
    found.push({ id: "gitmodulesName", message: `disallowed submodule name: ${shown(name)}` })
  if (value === null) return found
  if (key === "url" && !isAllowedSubmoduleUrl(value))
    found.push({ id: "gitmodulesUrl", message: `disallowed submodule url: ${shown(value)}` })
  if (key === "path" && looksLikeOption(value))
    found.push({ id: "gitmodulesPath", message: `disallowed submodule path: ${shown(value)}` })
  if (key === "update" && isUpdateCommand(value)) {
    found.push({ id: "gitmodulesUpdate", message: `disallowed submodule update setting: ${shown(value)}` })
  }
  return found
}

// ---------------------------------------------------------------------------------------------
// Letting git parse

/** `git config --null --list` output: `key\nvalue\0`, or `key\0` for a key without a value. */
export const parseConfigList = (stdout: Buffer): ReadonlyArray<ConfigEntry> =>
  stdout
    .toString("utf8")
    .split("\0")
    .slice(0, -1)
    .map((record) => {
      const newline = record.indexOf("\n")
      return newline === -1
        ? { key: record, value: null }
        : { key: record.slice(0, newline), value: record.slice(newline + 1) }
    })

/** What git's config parser stops on, e.g. `fatal: bad config line 3 in standard input`. */
const PARSE_ERROR = /bad config line (\d+)/

/**
 * Everything fsck reports about `content` as a `.gitmodules` file. git parses it from standard
 * input (nothing is written to the repository; includes are not followed, as fsck does not follow
 * them); when it stops on a line it cannot parse, the entries it read before it are still checked,
 * as fsck's callback has seen them.
 */
export const findings = (repo: string, content: Uint8Array): Effect.Effect<ReadonlyArray<Finding>, Git.GitError> =>
  Effect.gen(function* () {
    const args = ["config", "--file=-", "--no-includes", "--null", "--list"]
    // 128: git died on a line it could not parse, after listing the entries before it.
    const result = yield* Git.inRepo(repo, args, { input: content, answerCodes: [128] })
    const line = PARSE_ERROR.exec(result.stderr)?.[1]
    if (result.exitCode !== 0 && line === undefined) {
      return yield* new Git.GitError({ args, exitCode: result.exitCode, stderr: result.stderr })
    }
    const found = parseConfigList(result.stdout).flatMap(entryFindings)
    return line === undefined
      ? found
      : [
          ...found,
          { id: "gitmodulesParse", message: `could not parse gitmodules blob (bad config line ${line})` } as const
        ]
  })

/** Why each kind of finding matters, for the person whose change was refused. */
const WHY: Record<FsckId, string> = {
  gitmodulesName:
    "a submodule name must not be empty nor have a '..' component, which would put the submodule's repository outside .git/modules",
  gitmodulesUrl:
    "a submodule URL must not start with '-', which git would read as an option, nor hide a line break, climb above the host with '../' or lack a host, which could fool a credential helper",
  gitmodulesPath: "a submodule path must not start with '-', which git would read as an option",
  gitmodulesUpdate:
    "'update = !command' would run that command on `git submodule update`; only a clone's own configuration may say it",
  gitmodulesParse: "git cannot read the file as configuration"
}

/**
 * Why `content` must not be written as the `.gitmodules` file at `path`, or `undefined`: what
 * receive-pack would refuse a push over, in git's words with fsck's message id, and why.
 */
export const problem = (
  repo: string,
  path: string,
  content: Uint8Array
): Effect.Effect<string | undefined, Git.GitError> =>
  Effect.map(findings(repo, content), (found) => {
    const refused = found.filter((f) => refusedOnPush(f.id))
    if (refused.length === 0) return undefined
    // fsck repeats a bad name with each of its entries; once is enough here.
    const what = [...new Set(refused.map((f) => `${f.id}: ${f.message}`))].join("; ")
    const why = [...new Set(refused.map((f) => WHY[f.id]))].join("; ")
    return `${what} (git refuses such a .gitmodules on push, as older git versions act on it in a clone with --recurse-submodules: ${why}) [path: ${path}]`
  })

/**
 * Refuses a commit that writes a `.gitmodules` (under any name fsck reads as one, in any
 * directory: Paths.isGitmodulesName) whose content fsck would refuse on push. Symbolic links are
 * refused by their name already (Paths.pathProblem).
 */
export const checkChanges = (
  repo: string,
  changes: ReadonlyArray<FileChange>
): Effect.Effect<void, Git.GitError | Git.GitArgumentError> =>
  Effect.gen(function* () {
    for (const change of changes) {
      if (change.kind !== "write" || change.mode === "120000") continue
      if (!Paths.isGitmodulesName(change.path.slice(change.path.lastIndexOf("/") + 1))) continue
      const message = yield* problem(repo, change.path, change.content)
      if (message !== undefined) return yield* new Git.GitArgumentError({ message })
    }
  })
