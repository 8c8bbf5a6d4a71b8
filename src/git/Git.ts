// The only door to git: the `git` CLI, spawned without a shell, with `--` before any path.
// Everything Hearth does to repositories on disk goes through this module.
import { Data, Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdir, rm } from "node:fs/promises"
import { dirname } from "node:path"

export class GitError extends Data.TaggedError("GitError")<{
  readonly args: ReadonlyArray<string>
  readonly exitCode: number | null
  readonly stderr: string
}> {
  override get message() {
    return `git ${this.args.join(" ")} failed (exit ${this.exitCode}): ${this.stderr.trim()}`
  }
}

export interface RunOptions {
  /** Directory git runs in (`git -C`). */
  readonly cwd?: string | undefined
  /** Bytes written to git's standard input. */
  readonly input?: string | Uint8Array | undefined
  /** Extra environment (on top of a minimal one: no user config, no prompts). */
  readonly env?: Record<string, string> | undefined
}

export interface RunResult {
  readonly stdout: Buffer
  readonly stderr: string
}

/** Environment for every git process: no user or system config, never ask on a terminal. */
export const gitEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  LANG: "C",
  ...extra
})

/** Runs `git <args>` to completion; fails with `GitError` on a non-zero exit. */
export const run = (args: ReadonlyArray<string>, options: RunOptions = {}): Effect.Effect<RunResult, GitError> =>
  Effect.callback<RunResult, GitError>((resume, signal) => {
    const child = spawn("git", args as Array<string>, {
      cwd: options.cwd,
      env: gitEnv(options.env),
      stdio: ["pipe", "pipe", "pipe"],
      signal
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.on("error", (error) =>
      resume(Effect.fail(new GitError({ args, exitCode: null, stderr: String(error) })))
    )
    child.on("close", (code) => {
      const err = Buffer.concat(stderr).toString("utf8")
      resume(
        code === 0
          ? Effect.succeed({ stdout: Buffer.concat(stdout), stderr: err })
          : Effect.fail(new GitError({ args, exitCode: code, stderr: err }))
      )
    })
    child.stdin.on("error", () => {}) // git may exit before reading all input
    child.stdin.end(options.input)
  })

/** Creates an empty bare repository at `path` (parents included) with `defaultBranch` as HEAD. */
export const initBare = (path: string, defaultBranch: string) =>
  Effect.andThen(
    Effect.promise(() => mkdir(dirname(path), { recursive: true })),
    run(["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, "--", path])
  )

/** Removes a repository directory and everything in it. */
export const removeRepository = (path: string) => Effect.promise(() => rm(path, { recursive: true, force: true }))
