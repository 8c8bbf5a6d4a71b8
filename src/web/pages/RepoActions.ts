// What the frame's buttons do: `POST /{owner}/{repo}/action/{star|unstar|watch|unwatch}`
// (Forgejo's `routers/web/repo/repo.go` `Action`) through the same SocialService as the API's
// PUT/DELETE /user/starred and /subscription (403 when the owner blocked the viewer), then back
// to the page (or, for htmx, the buttons alone); and forking, `/{owner}/{repo}/fork` (Forgejo's
// `routers/web/repo/fork.go`): a form for the new name, then ForksService as `POST /forks`.
import { Effect } from "effect"
import { ForksService } from "../../forks/Service.ts"
import * as Errors from "../../http/Errors.ts"
import { OrgsService } from "../../orgs/Service.ts"
import { type FieldErrors, field, formError, select } from "../Form.ts"
import { html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { type RepoFrame, type RepoView, repoBase } from "../RepoFrame.ts"
import { safeRedirect, type Web } from "../Web.ts"

const ACTIONS = ["star", "unstar", "watch", "unwatch"] as const

export const RepoActionPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const forks = yield* ForksService
    const orgs = yield* OrgsService
    const { social, repos } = frame

    const act = (view: RepoView, action: (typeof ACTIONS)[number]) => {
      const user = view.ctx.viewer!.user
      switch (action) {
        case "star":
          return social.star(user, view.repo)
        case "unstar":
          return social.unstar(user, view.repo)
        case "watch":
          return social.watch(user, view.repo)
        case "unwatch":
          return social.unwatch(user, view.repo)
      }
    }

    /** The owners a fork may go to: the user first, then the organizations they may create in. */
    const ownersOf = (view: RepoView) => {
      const user = view.ctx.viewer!.user
      return Effect.map(orgs.repoOwnersFor(user), (list) => [user, ...list])
    }

    const forkForm = (view: RepoView, typed: { name: string; owner?: string }, errors: FieldErrors, message?: string) =>
      Effect.flatMap(ownersOf(view), (owners) =>
        frame.page(
          view,
          {
            title: `Fork ${view.owner.name}/${view.repo.name}`,
            tab: "code",
            ...(message === undefined && Object.keys(errors).length === 0 ? {} : { status: 422 })
          },
          html`<div class="col-md-8 mx-auto">
  <h1 class="h3 mb-3">${icon("repo-forked", 24)} Fork ${view.owner.name}/${view.repo.name}</h1>
  ${formError(message)}
  <form method="post" action="${view.base}/fork">
    ${csrfField(view.ctx)}
    ${select(
      {
        name: "uid",
        label: "Owner",
        value: typed.owner ?? String(owners[0]!.id),
        choices: owners.map((owner) => [String(owner.id), owner.name] as const),
        hint: "You, or an organization you may create repositories in."
      },
      errors
    )}
    ${field({ name: "repo_name", label: "Repository name", value: typed.name, required: true, autofocus: true }, errors)}
    <button class="btn btn-primary" type="submit">${icon("repo-forked")} Fork repository</button>
  </form>
</div>`
        )
      )

    return [
      ...ACTIONS.map((action) =>
        frame.route("POST", `/:owner/:repo/action/${action}`, { access: "signed-in" }, (view, form) =>
          Effect.gen(function* () {
            yield* act(view, action)
            if (view.ctx.request.headers["hx-request"] === "true") {
              // The buttons with the counts as they are now.
              const repo = yield* repos.getById(view.repo.id)
              return frame.fragment(view.ctx, yield* frame.socialButtons({ ...view, repo }))
            }
            return web.redirect(view.ctx, safeRedirect(form.get("redirect_to")) ?? view.base)
          })
        )
      ),
      frame.route("GET", "/:owner/:repo/fork", { access: "signed-in" }, (view) =>
        forkForm(view, { name: view.repo.name }, {})
      ),
      frame.route("POST", "/:owner/:repo/fork", { access: "signed-in" }, (view, form) =>
        Effect.gen(function* () {
          const caller = view.ctx.viewer!
          const name = (form.get("repo_name") ?? "").trim()
          const typed = { name, owner: form.get("uid") ?? String(caller.user.id) }
          if (name === "") return yield* forkForm(view, typed, { repo_name: "A repository name is required." })
          const owner = (yield* ownersOf(view)).find((candidate) => String(candidate.id) === typed.owner)
          if (owner === undefined) {
            return yield* forkForm(view, typed, { uid: "You may not create repositories for this owner." })
          }
          const organization = owner.id === caller.user.id ? undefined : owner.name
          const made = yield* forks.fork(caller, view, { name, organization }).pipe(
            Effect.map((made) => ({ made })),
            Effect.catch((error) =>
              error instanceof Errors.ValidationFailed || error instanceof Errors.Conflict
                ? Effect.succeed({ refused: error.message })
                : Effect.fail(error)
            )
          )
          if ("refused" in made) return yield* forkForm(view, typed, { repo_name: made.refused })
          const { repo } = made.made
          return web.redirect(view.ctx, repoBase(made.made.owner.name, repo.name))
        })
      )
    ]
  })
