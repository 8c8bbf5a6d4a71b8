// Repository archives streamed from git: `git archive` for .zip/.tar.gz, `git bundle` for
// .bundle. No time limit of our own: git runs as long as the client keeps reading, and is
// killed as soon as the response is gone (client cancelled or timed out).

import { PassThrough } from "node:stream"
import { toServerResponse } from "@effect/platform-node/NodeHttpServerRequest"
import { Effect } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { spawnStream } from "../git/Git.ts"

export const FORMATS = [
  { ext: ".tar.gz", contentType: "application/gzip" },
  { ext: ".zip", contentType: "application/zip" },
  { ext: ".bundle", contentType: "application/octet-stream" }
] as const
export type Format = (typeof FORMATS)[number]

/** Splits `{ref}{ext}`; undefined when the extension is not one we serve. */
export const parseArchiveName = (name: string): { readonly ref: string; readonly format: Format } | undefined => {
  const format = FORMATS.find((f) => name.endsWith(f.ext) && name.length > f.ext.length)
  return format === undefined ? undefined : { ref: name.slice(0, -format.ext.length), format }
}

/**
 * Streams `git <args>` run against `repo` as the response body. Git's arguments are built by
 * the caller from a resolved object name or full ref, never from raw input.
 */
export const streamGit = (
  repo: string,
  args: ReadonlyArray<string>,
  format: { readonly contentType: string },
  filename?: string
) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const child = yield* spawnStream(args, { cwd: repo, env: { GIT_DIR: repo }, stdin: false })
    let exited = false
    const kill = () => {
      if (!exited) child.kill("SIGKILL")
    }
    const stderr: Array<Buffer> = []
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 64) stderr.push(chunk)
    })
    const body = new PassThrough()
    child.stdout.pipe(body, { end: false })
    child.on("error", (error) => body.destroy(error))
    child.on("close", (code, signal) => {
      exited = true
      if (code === 0) return body.end()
      // The status line is already sent: cutting the body short is the only honest signal left.
      const message = Buffer.concat(stderr).toString("utf8").trim()
      Effect.runFork(Effect.logWarning(`git ${args[0]} exited with ${code ?? signal}`, message))
      body.destroy(new Error(`git ${args[0]} failed`))
    })
    body.on("close", kill)
    try {
      ;(toServerResponse(request) as unknown as NodeJS.EventEmitter).on("close", kill)
    } catch {
      // Not a Node request (tests of the router alone): `body` closing still stops git.
    }
    return HttpServerResponse.raw(body, {
      contentType: format.contentType,
      headers: {
        // Without a file name the body is shown, not saved (a pull request's .diff).
        ...(filename === undefined
          ? {}
          : { "content-disposition": `attachment; filename="${filename.replace(/["\\\r\n]/g, "_")}"` }),
        "cache-control": "no-store"
      }
    })
  })
