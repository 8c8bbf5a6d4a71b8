// SSH keys and the real `ssh` client for tests of the built-in SSH server: `ssh-keygen` keys,
// and the options that make `ssh` (alone or as git's GIT_SSH_COMMAND) talk to a test server
// without prompts, agents or known-hosts files.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"

export interface TestKey {
  /** The private key file (its public half is `${file}.pub`). */
  readonly file: string
  /** The public key line, as registered over the API. */
  readonly pub: string
  /** `SHA256:…`, as ssh-keygen -l prints it. */
  readonly fingerprint: string
}

let made = 0
/** A new ed25519 key pair without a passphrase in `dir`. ssh-keygen does not talk to the server: run synchronously. */
export const keygen = (dir: string, comment = `key${made + 1}`): TestKey => {
  const file = join(dir, `key${++made}`)
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", file])
  const pub = readFileSync(`${file}.pub`, "utf8").trim()
  const fingerprint = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", `${file}.pub`], {
    encoding: "utf8"
  }).split(" ")[1]!
  return { file, pub, fingerprint }
}

/** `ssh` options for the server on 127.0.0.1:`port` with only `key`, never prompting. */
export const sshArgs = (key: string, port: number) => [
  "-i",
  key,
  "-p",
  String(port),
  "-o",
  "StrictHostKeyChecking=no",
  "-o",
  "UserKnownHostsFile=/dev/null",
  "-o",
  "IdentitiesOnly=yes",
  "-o",
  "BatchMode=yes",
  "-o",
  "LogLevel=ERROR"
]

/** GIT_SSH_COMMAND for git over the built-in server with `key`. */
export const gitSshCommand = (key: string, port: number) => `ssh ${sshArgs(key, port).join(" ")}`

/** `ssh://user@127.0.0.1:port/path`, the address form with a port. */
export const sshUrl = (port: number, path: string, user = "git") => `ssh://${user}@127.0.0.1:${port}/${path}`
