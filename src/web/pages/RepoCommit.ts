// One commit, `/{owner}/{repo}/commit/{sha}` (Forgejo's `routers/web/repo/commit.go` `Diff`): its
// message, author and committer, parents (links), and its diff against its first parent (git's
// own patch, parsed by src/web/code/Diff.ts with Forgejo's limits), unified or split
// (`?style=`).
import { Effect, Option } from "effect"
import { commitPatch } from "../../git/Patches.ts"
import { CommitSigner } from "../../git/SigningRules.ts"
import { DIFF_ARGS, parseDiff } from "../code/Diff.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { bodyOf, shortSha, subjectOf } from "../RepoData.ts"
import { makeDiffView } from "../RepoDiff.ts"
import type { RepoFrame } from "../RepoFrame.ts"
import { refUrl, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"

const HEX = /^[0-9a-fA-F]{4,64}$/

export const RepoCommitPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { contents, data } = frame
    const diffs = makeDiffView(frame)
    const signer = yield* CommitSigner

    return [
      frame.route("GET", "/:owner/:repo/commit/:sha", {}, (view) =>
        Effect.gen(function* () {
          const id = view.rest[1] ?? ""
          if (view.rest.length !== 2 || !HEX.test(id)) return web.notFound(view.ctx)
          const found = yield* contents.commitOf(view.handle, id.toLowerCase())
          if (Option.isNone(found)) return web.notFound(view.ctx)
          const sha = found.value.commit
          const [commit, patch, verification] = yield* Effect.all(
            [
              data.commitOne(view.handle, sha),
              Effect.orDie(commitPatch(view.handle.dir, sha, DIFF_ARGS)),
              signer.verifyCommit(view.handle.dir, sha)
            ],
            { concurrency: "unbounded" }
          )
          if (commit === undefined) return web.notFound(view.ctx)
          const diff = parseDiff(patch.text)
          const rendered = yield* diffs.render(view, diff, patch.truncated, { commit: sha })
          const body = bodyOf(commit.message)
          const sameCommitter =
            commit.author.name === commit.committer.name && commit.author.email === commit.committer.email
          return yield* frame.page(
            view,
            {
              title: `${subjectOf(commit.message)} · ${view.owner.name}/${view.repo.name}@${shortSha(sha)}`,
              tab: "code"
            },
            html`<div class="Box mb-3" data-testid="commit">
  <div class="Box-header">
    <div class="d-flex flex-items-start">
      <h1 class="h4 flex-auto wb-break-word" data-testid="commit-title">${subjectOf(commit.message)}</h1>
      <a class="btn btn-sm ml-2" href="${refUrl(view.base, "src", { kind: "commit", name: sha })}">${icon("file-code")} Browse files</a>
    </div>
    ${body === "" ? empty : html`<pre class="hearth-commit-message mt-2" data-testid="commit-body">${body}</pre>`}
  </div>
  <div class="Box-body d-flex flex-wrap flex-items-center f6">
    ${verification.verified ? html`<span class="Label Label--success mr-3" title="${verification.reason}" data-testid="commit-verified">Verified</span>` : empty}
    <span class="mr-3"><strong>${commit.author.name}</strong> authored ${when(commit.author.date)}</span>
    ${sameCommitter ? empty : html`<span class="mr-3"><strong>${commit.committer.name}</strong> committed ${when(commit.committer.date)}</span>`}
    <span class="ml-auto">
      ${
        commit.parents.length === 0
          ? html`<span class="color-fg-muted mr-2">No parent</span>`
          : html`<span class="color-fg-muted">${commit.parents.length === 1 ? "Parent" : "Parents"}</span> ${commit.parents.map(
              (p) =>
                html`<a class="text-mono mr-1" href="${view.base}/commit/${p}" data-testid="parent">${shortSha(p)}</a>`
            )}`
      }
      <span class="color-fg-muted ml-2">Commit</span> <span class="text-mono" data-testid="commit-sha">${sha}</span>
    </span>
  </div>
</div>
${rendered}`
          )
        })
      )
    ]
  })
