// Patches and merge bases for the web's commit and compare views (Forgejo's `services/gitdiff`
// runs the same commands): git prints the patch, src/web/code/Diff.ts parses it. The output is
// bounded (`maxOutput`): a commit adding a huge file is cut rather than read whole into memory,
// and the view says the diff was cut.
import { Effect, Option } from "effect"
import * as Git from "./Git.ts"

/** What a patch read gives: git's output and whether it was cut at the bound. */
export interface PatchOutput {
  readonly text: Buffer
  readonly truncated: boolean
}

/** 16 MiB of patch text at most; Forgejo's diff limits (files, lines) cut far below that on normal commits. */
export const MAX_PATCH_BYTES = 16 * 1024 * 1024

const checkSha = (sha: string) =>
  Git.isSha(sha) ? Effect.void : Effect.die(new Error(`not an object name: ${JSON.stringify(sha)}`))

const patchOf = (repo: string, args: ReadonlyArray<string>) =>
  Effect.map(Git.inRepo(repo, args, { maxOutput: MAX_PATCH_BYTES }), (result) => ({
    text: result.stdout,
    truncated: result.truncated === true
  }))

/**
 * The patch of commit `sha` (a full id) against its first parent, or against nothing for a root
 * commit; `diffArgs` are the format options (src/web/code/Diff.ts DIFF_ARGS).
 */
export const commitPatch = (
  repo: string,
  sha: string,
  diffArgs: ReadonlyArray<string>
): Effect.Effect<PatchOutput, Git.GitError> =>
  Effect.andThen(
    checkSha(sha),
    patchOf(repo, ["show", "--format=", "--diff-merges=first-parent", ...diffArgs, "--end-of-options", sha, "--"])
  )

/** The patch from commit `base` to commit `head` (full ids): `git diff base head`. */
export const rangePatch = (
  repo: string,
  base: string,
  head: string,
  diffArgs: ReadonlyArray<string>
): Effect.Effect<PatchOutput, Git.GitError> =>
  Effect.andThen(
    Effect.andThen(checkSha(base), checkSha(head)),
    patchOf(repo, ["diff", ...diffArgs, "--end-of-options", base, head, "--"])
  )

/** The best common ancestor of two commits (full ids), or none when their histories do not meet. */
export const mergeBase = (repo: string, a: string, b: string): Effect.Effect<Option.Option<string>, Git.GitError> =>
  Effect.andThen(
    Effect.andThen(checkSha(a), checkSha(b)),
    Effect.map(Git.inRepo(repo, ["merge-base", "--end-of-options", a, b], { answerCodes: [1] }), (result) => {
      const sha = result.stdout.toString("utf8").trim()
      return result.exitCode === 0 && Git.isSha(sha) ? Option.some(sha) : Option.none()
    })
  )

/** How many commits `head` has that `base` has not, and the reverse (`rev-list --left-right --count`). */
export const divergence = (
  repo: string,
  base: string,
  head: string
): Effect.Effect<{ readonly ahead: number; readonly behind: number }, Git.GitError> =>
  Effect.andThen(
    Effect.andThen(checkSha(base), checkSha(head)),
    Effect.map(
      Git.inRepo(repo, ["rev-list", "--left-right", "--count", "--end-of-options", `${base}...${head}`, "--"]),
      (result) => {
        const [behind, ahead] = result.stdout.toString("utf8").trim().split(/\s+/).map(Number)
        return { ahead: ahead ?? 0, behind: behind ?? 0 }
      }
    )
  )
