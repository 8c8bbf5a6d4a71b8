// A git push to a wiki (`{owner}/{repo}.wiki.git` over HTTP or SSH) becomes Wiki events, one per
// page it changed on the wiki's branch: created, edited, renamed (git's rename detection) or
// deleted, with the pushed commit's subject as `comment`. Forgejo sends no webhook for a wiki push
// (cmd/hook.go skips wiki refs); Hearth tells subscribers, since the SPEC's wiki events cover every
// change of a page, and the event says `via` so a consumer can follow Forgejo and skip them.
import { Effect, Option } from "effect"
import type { Doer, Event, RefUpdate, RepositoryRef, WikiAction } from "../events/Events.ts"
import * as Git from "../git/Git.ts"
import { gitPathToWebPath } from "./Paths.ts"

/** What a wiki push's log header carries (src/repos/GitHttp.ts writes it). */
export interface WikiPushHeader {
  readonly wiki: true
  readonly repo: RepositoryRef
  readonly doer: Doer
  readonly via: "http" | "ssh"
}

export const isWikiPushHeader = (header: unknown): header is WikiPushHeader =>
  header !== null && typeof header === "object" && "wiki" in header && header.wiki === true

// git's empty tree: what a branch's first push is compared with.
const EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbbf3904"

/** The Wiki events of the refs a push moved in the wiki at `dir`. */
export const wikiPushEvents = (dir: string, header: WikiPushHeader, refs: ReadonlyArray<RefUpdate>) =>
  Effect.gen(function* () {
    // Only the wiki's branch holds its pages.
    const branch = Option.getOrUndefined(yield* Git.headBranch(dir))
    const moved = refs.find((r) => r.ref === `refs/heads/${branch}`)
    if (moved === undefined) return []
    const from = /^0+$/.test(moved.before) ? EMPTY_TREE : moved.before
    const to = /^0+$/.test(moved.after) ? EMPTY_TREE : moved.after
    const diff = yield* Git.inRepo(dir, ["diff", "--name-status", "-z", "-M", from, to])
    const subject = /^0+$/.test(moved.after)
      ? ""
      : (yield* Git.inRepo(dir, ["log", "-1", "--format=%s", moved.after])).stdout.toString("utf8").trim()
    const fields = diff.stdout.toString("utf8").split("\0")
    const events: Array<Event> = []
    const add = (action: WikiAction, path: string, oldPath?: string) => {
      const page = gitPathToWebPath(path)
      if (page === undefined) return
      const oldPage = oldPath === undefined ? undefined : gitPathToWebPath(oldPath)
      events.push({
        _tag: "Wiki",
        repo: header.repo,
        doer: header.doer,
        action,
        page,
        ...(oldPage === undefined ? {} : { oldPage }),
        comment: subject,
        via: header.via
      })
    }
    for (let i = 0; i < fields.length; ) {
      const status = fields[i++] ?? ""
      if (status === "") continue
      if (status.startsWith("R")) {
        const oldPath = fields[i++] ?? ""
        const path = fields[i++] ?? ""
        if (gitPathToWebPath(oldPath) === undefined) add("created", path)
        else add("renamed", path, oldPath)
        continue
      }
      const path = fields[i++] ?? ""
      add(status === "A" ? "created" : status === "D" ? "deleted" : "edited", path)
    }
    return events
  })
