// The real git client for tests: a clean environment (no user config, no prompts) and a fixed
// identity, so commits made by tests never depend on the machine.
import { execFile, spawn } from "node:child_process"
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gitEnv } from "../../src/git/Git.ts"

export const TEST_IDENTITY = {
  GIT_AUTHOR_NAME: "T",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "T",
  GIT_COMMITTER_EMAIL: "t@example.com"
}

/**
 * Every git process started in this process from now on (the in-process server's too): a `git`
 * first on PATH, in `work`, that records `cwd|args` and runs the real one. `length()` marks a
 * point, `since(mark)` the commands started after it; `stop()` puts PATH back.
 */
export const recordGitProcesses = (work: string) => {
  const bin = join(work, "bin")
  mkdirSync(bin, { recursive: true })
  const log = join(work, "git.log")
  writeFileSync(log, "")
  writeFileSync(join(bin, "git"), `#!/bin/sh\nprintf '%s|%s\\n' "$PWD" "$*" >> '${log}'\nexec /usr/bin/git "$@"\n`)
  chmodSync(join(bin, "git"), 0o755)
  const saved = process.env.PATH
  process.env.PATH = `${bin}:${saved}`
  return {
    length: () => readFileSync(log, "utf8").length,
    since: (mark: number) => readFileSync(log, "utf8").slice(mark).split("\n").filter(Boolean),
    stop: () => {
      process.env.PATH = saved
    }
  }
}

/** A repository's clone URL on `base` with a test account's credentials in it (`alice/code`). */
export const remoteAs = (base: string, login: string, repo: string, password = "password123") =>
  `${base.replace("http://", `http://${login}:${password}@`)}/${repo}.git`

/** `git <args>` in `cwd`; resolves with its trimmed standard output, rejects with its stderr. */
export const gitIn = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<string>((done, fail) =>
    execFile(
      "git",
      args as Array<string>,
      { cwd, env: gitEnv({ ...TEST_IDENTITY, ...env }), timeout: 60_000, maxBuffer: 1 << 26 },
      (error, stdout, stderr) =>
        error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  )

export interface GitOutcome {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `git <args>` in `cwd` with the same environment, resolving with the exit code and both outputs
 * whatever they are: for tests of refusals, where git's failure and what it printed are the point.
 * Spawned, not run synchronously: the server under test answers in this same process.
 */
export const gitRun = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  new Promise<GitOutcome>((done, fail) => {
    const child = spawn("git", args as Array<string>, { cwd, env: gitEnv({ ...TEST_IDENTITY, ...env }) })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("error", fail)
    child.on("close", (code) => done({ code, stdout, stderr }))
    child.stdin.end()
  })
