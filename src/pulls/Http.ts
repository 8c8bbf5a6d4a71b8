import { Effect, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { streamGit } from "../branches/Archive.ts"
import { detailOptions, makeCommitPresenter } from "../branches/Commits.ts"
import * as Reader from "../branches/Service.ts"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { answerFirst } from "../lib/AfterAnswer.ts"
import { CurrentRepo, type OpenedRepository } from "../repos/Assignment.ts"
import { AutoMerge } from "./AutoMerge.ts"
import { PullPresenter, respondPulls } from "./Present.ts"
import { type ChangedFile, mergeOptionOf } from "./Schema.ts"
import { type Loaded, PullsService, parseMergeRequest, pullRef } from "./Service.ts"

const ok = HttpServerResponse.empty({ status: 200 })

/** Forgejo's `whitespace` query of the files list as git's options. */
const WHITESPACE: Record<string, ReadonlyArray<string>> = {
  "ignore-all": ["-w"],
  "ignore-change": ["-b"],
  "ignore-eol": ["--ignore-space-at-eol"],
  "show-all": []
}

/** A changed file's status as the compare's `files` name it (Forgejo's CommitAffectedFiles). */
const COMPARE_STATUS: Record<string, string> = {
  added: "added",
  deleted: "removed",
  renamed: "renamed",
  copied: "copied",
  changed: "modified",
  unchanged: "modified"
}

/** The merge body as Forgejo binds it: JSON (keys matched without case) or a form. */
const mergeBody = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  const type = (request.headers["content-type"] ?? "").toLowerCase()
  if (type.startsWith("application/x-www-form-urlencoded")) {
    const form: Record<string, unknown> = {}
    for (const [key, value] of new URLSearchParams(text)) {
      // Form keys are Forgejo's snake-cased field names.
      const name =
        {
          do: "Do",
          merge_title_field: "MergeTitleField",
          merge_message_field: "MergeMessageField",
          merge_commit_id: "MergeCommitID"
        }[key] ?? key
      form[name] = value
    }
    return mergeOptionOf(form)
  }
  if (text.trim() === "") return {}
  try {
    return mergeOptionOf(JSON.parse(text))
  } catch {
    return yield* Errors.validationFailed("the body is not valid JSON")
  }
})

export const PullsHttp = apiGroup(HearthApi, "pulls", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const pulls = yield* PullsService
    const autoMerge = yield* AutoMerge
    const presenter = yield* PullPresenter
    const { toCommits } = yield* makeCommitPresenter

    const presentOne = (opened: OpenedRepository, loaded: Loaded) =>
      Effect.map(presenter.present(opened.caller, [loaded]), (list) => list[0]!)

    /** The commit a pull request's commits and files start from: its stored merge base once merged. */
    const startOf = (loaded: Loaded, head: string) =>
      Effect.gen(function* () {
        if (loaded.pull.hasMerged && loaded.pull.mergeBase !== "") return loaded.pull.mergeBase
        const base = Option.getOrUndefined(
          yield* Effect.orDie(Git.revParse(loaded.base.path, `refs/heads/${loaded.pull.baseBranch}`))
        )
        if (base === undefined) return loaded.pull.mergeBase
        return Option.getOrElse(yield* Merge.mergeBase(loaded.base.path, base, head), () => base)
      })

    const headOf = (loaded: Loaded) =>
      Effect.map(
        Effect.orDie(Git.revParse(loaded.base.path, pullRef(loaded.issue.index))),
        (sha) => Option.getOrUndefined(sha) ?? loaded.pull.headSha
      )

    return handlers
      .handle("listPulls", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const page = yield* resolvePage(query)
          const labels =
            query.labels === undefined ? [] : typeof query.labels === "string" ? [query.labels] : query.labels
          const found = yield* pulls.list(opened, { ...query, labels }, page)
          yield* setListHeaders(page, found.total, { withLink: true })
          return respondPulls(yield* presenter.present(opened.caller, found.rows))
        })
      )
      .handle("createPull", ({ payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const loaded = yield* pulls.create(opened, payload)
          return respondPulls(yield* presentOne(opened, loaded), 201)
        })
      )
      .handle("pinnedPulls", () =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respondPulls(yield* presenter.present(opened.caller, yield* pulls.pinned(opened)))
        })
      )
      .handle("getPull", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respondPulls(yield* presentOne(opened, yield* pulls.get(opened, params.index)))
        })
      )
      .handle("editPull", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const loaded = yield* pulls.edit(opened, params.index, payload)
          return respondPulls(yield* presentOne(opened, loaded), 201)
        })
      )
      .handle("compare", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { base, head } = yield* pulls.compare(opened, params.basehead)
          const { commits, total } = yield* Reader.listCommits(
            opened.path,
            head,
            { offset: 0, limit: 1000 },
            undefined,
            base
          )
          const options = { ...detailOptions({ files: query.files, verification: query.verification }), stat: true }
          const files = yield* Merge.changedFiles(opened.path, base, head)
          return {
            commits: yield* toCommits(opened.owner, opened.repo, opened.path, commits, opened.caller, options),
            total_commits: total,
            files: files.map((f) => ({ filename: f.filename, status: COMPARE_STATUS[f.status] ?? "modified" }))
          }
        })
      )
      .handle("commitPull", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respondPulls(yield* presentOne(opened, yield* pulls.byMergeCommit(opened, params.sha)))
        })
      )
      .handle("getPullByBaseHead", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const loaded = yield* pulls.getByBaseHead(opened, params.base, params.head)
          return respondPulls(yield* presentOne(opened, loaded))
        })
      )
      .handle("downloadPull", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          if (params.diffType !== "diff" && params.diffType !== "patch") return yield* Errors.notFound()
          const loaded = yield* pulls.get(opened, params.index)
          const head = yield* headOf(loaded)
          const start = loaded.pull.mergeBase !== "" ? loaded.pull.mergeBase : yield* startOf(loaded, head)
          // Both read the base repository, from the stored merge base (Forgejo's DownloadPullDiffOrPatch).
          const args =
            params.diffType === "diff"
              ? [
                  "diff",
                  "-p",
                  ...(query.binary === "true" ? ["--binary", "--histogram"] : []),
                  "--end-of-options",
                  start,
                  head,
                  "--"
                ]
              : ["format-patch", "--binary", "--stdout", "--end-of-options", `${start}...${head}`, "--"]
          return yield* streamGit(loaded.base.path, args, { contentType: "text/plain; charset=utf-8" })
        })
      )
      .handle("pullCommits", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const loaded = yield* pulls.get(opened, params.index)
          const head = yield* headOf(loaded)
          const start = yield* startOf(loaded, head)
          const page = yield* resolvePage(query)
          const { commits, total } = yield* Reader.listCommits(loaded.base.path, head, page, undefined, start)
          yield* setListHeaders(page, total, { withLink: true, withPageCount: true })
          const options = { ...detailOptions({ files: query.files, verification: query.verification }), stat: true }
          return yield* toCommits(
            loaded.base.owner,
            loaded.base.repo,
            loaded.base.path,
            commits,
            opened.caller,
            options
          )
        })
      )
      .handle("pullFiles", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const loaded = yield* pulls.get(opened, params.index)
          const head = yield* headOf(loaded)
          const start = yield* startOf(loaded, head)
          const files = yield* Merge.changedFiles(
            loaded.base.path,
            start,
            head,
            WHITESPACE[query.whitespace ?? ""] ?? []
          )
          const skipTo = query["skip-to"]
          const from =
            skipTo === undefined || skipTo === ""
              ? 0
              : Math.max(
                  0,
                  files.findIndex((f) => f.filename === skipTo)
                )
          const listed = files.slice(from)
          const page = yield* resolvePage(query)
          yield* setListHeaders(page, listed.length, { withLink: true, withPageCount: true })
          const side = loaded.head ?? loaded.base
          const html = `${settings.server.ROOT_URL}${encodeURIComponent(side.owner.name)}/${encodeURIComponent(side.repo.name)}`
          const api = `${settings.server.ROOT_URL}api/v1/repos/${encodeURIComponent(side.owner.name)}/${encodeURIComponent(side.repo.name)}`
          const rows = listed.slice(page.offset, page.offset + page.limit).map(
            (f): ChangedFile => ({
              filename: f.filename,
              ...(f.previousFilename === undefined ? {} : { previous_filename: f.previousFilename }),
              status: f.status,
              additions: f.additions,
              deletions: f.deletions,
              changes: f.additions + f.deletions,
              html_url: `${html}/src/commit/${head}/${f.filename}`,
              contents_url: `${api}/contents/${f.filename}?ref=${head}`,
              raw_url: `${html}/raw/commit/${head}/${f.filename}`
            })
          )
          return rows
        })
      )
      .handle("isMerged", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          if (!(yield* pulls.isMerged(opened, params.index))) return yield* Errors.notFound()
          return HttpServerResponse.empty({ status: 204 })
        })
      )
      .handle("mergePull", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const request = yield* parseMergeRequest(yield* mergeBody)
          // The feed, notifications and languages of the merge wait for its answer.
          const outcome = yield* answerFirst(pulls.merge(opened, params.index, request))
          // Forgejo: 201 (empty) when the merge was scheduled for when checks succeed.
          return outcome === "scheduled" ? HttpServerResponse.empty({ status: 201 }) : ok
        })
      )
      .handle("cancelScheduledMerge", ({ params }) =>
        Effect.gen(function* () {
          yield* autoMerge.cancel(yield* CurrentRepo, params.index)
          return HttpServerResponse.empty({ status: 204 })
        })
      )
      .handle("updatePull", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* pulls.update(opened, params.index, query.style ?? "merge")
          return ok
        })
      )
  })
)
