// The web interface's routes (mounted in src/Server.ts's AppRoutes): one page module per view,
// each listed once below, the static assets, and the styled 404 page for a web page nobody
// answers. Paths are Forgejo's; the API (/api/…), git over HTTP (/{owner}/{repo}/info/refs,
// …/git-upload-pack, …/git-receive-pack), key exports (/{owner}.gpg), WebFinger and health keep
// their own routes and their own answers (an empty 404, a 405 with `Allow`).
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerError, type HttpServerRequest } from "effect/http"
import { FeedPages } from "../activities/Feeds.ts"
import { AssetRoutes } from "./Assets.ts"
import { ChangePasswordPages } from "./pages/ChangePassword.ts"
import { DashboardPages } from "./pages/Dashboard.ts"
import { ExplorePages } from "./pages/Explore.ts"
import { HomePages } from "./pages/Home.ts"
import { HookSettingsPages } from "./pages/HookSettings.ts"
import { NotificationPages } from "./pages/Notifications.ts"
import { ProfilePages } from "./pages/Profile.ts"
import { PullFilesPages } from "./pages/PullFiles.ts"
import { RepoActionPages } from "./pages/RepoActions.ts"
import { RepoBlamePages } from "./pages/RepoBlame.ts"
import { RepoBranchesPages } from "./pages/RepoBranches.ts"
import { RepoCommitPages } from "./pages/RepoCommit.ts"
import { RepoCommitsPages } from "./pages/RepoCommits.ts"
import { RepoComparePages } from "./pages/RepoCompare.ts"
import { RepoHomePages } from "./pages/RepoHome.ts"
import { RepoIssuesPages } from "./pages/RepoIssues.ts"
import { RepoLabelsPages } from "./pages/RepoLabels.ts"
import { RepoMilestonesPages } from "./pages/RepoMilestones.ts"
import { RepoNewPages } from "./pages/RepoNew.ts"
import { RepoPullsPages } from "./pages/RepoPulls.ts"
import { RepoRawPages } from "./pages/RepoRaw.ts"
import { RepoReleasesPages } from "./pages/RepoReleases.ts"
import { RepoSettingsPages } from "./pages/RepoSettings.ts"
import { RepoSettingsAccessPages } from "./pages/RepoSettingsAccess.ts"
import { RepoSettingsProtectionPages } from "./pages/RepoSettingsProtection.ts"
import { RepoSrcPages } from "./pages/RepoSrc.ts"
import { RepoTagsPages } from "./pages/RepoTags.ts"
import { RepoWikiPages } from "./pages/RepoWiki.ts"
import { SignInPages } from "./pages/SignIn.ts"
import { SignUpPages } from "./pages/SignUp.ts"
import { AccountSettingsPages } from "./pages/settings/Account.ts"
import { ApplicationSettingsPages } from "./pages/settings/Applications.ts"
import { KeySettingsPages } from "./pages/settings/Keys.ts"
import { SecuritySettingsPages } from "./pages/settings/Security.ts"
import { makeRepoFrame } from "./RepoFrame.ts"
import { makeWeb, type Web } from "./Web.ts"

/**
 * Not a web page: the API and the other machine-facing paths, whose unknown URLs stay empty 404s
 * (and whose known paths with another method stay 405, which the server answers after routing).
 */
const NOT_WEB =
  /^\/(?:api(?:\/|$)|\.well-known\/|assets\/|[^/]+\/[^/]+\/(?:git-upload-pack|git-receive-pack|info\/refs)(?:$|\?))/

const isWebPageRequest = (request: HttpServerRequest.HttpServerRequest) =>
  (request.method === "GET" || request.method === "HEAD") && !NOT_WEB.test(request.url)

/** The styled 404 page for GET/HEAD of a path no route has (and that is not the API's). */
const notFoundPages = (web: Web) =>
  HttpRouter.middleware<{ handles: HttpServerError.HttpServerError }>()(
    (httpEffect) =>
      Effect.catch(httpEffect, (error) =>
        HttpServerError.isHttpServerError(error) &&
        error.reason._tag === "RouteNotFound" &&
        isWebPageRequest(error.reason.request)
          ? Effect.map(web.context, (ctx) => web.notFound(ctx))
          : Effect.fail(error)
      ),
    { global: true }
  )

export const WebRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const web = yield* makeWeb
    const repo = yield* makeRepoFrame(web)
    const routes = [
      ...(yield* HomePages(web)),
      ...(yield* ExplorePages(web)),
      ...(yield* SignInPages(web)),
      ...(yield* SignUpPages(web)),
      ...(yield* ChangePasswordPages(web)),
      ...(yield* ProfilePages(web)),
      ...(yield* AccountSettingsPages(web)),
      ...(yield* KeySettingsPages(web)),
      ...(yield* ApplicationSettingsPages(web)),
      ...(yield* SecuritySettingsPages(web)),
      ...(yield* NotificationPages(web)),
      ...(yield* DashboardPages(web)),
      ...(yield* RepoNewPages(web)),
      ...(yield* RepoHomePages(web, repo)),
      ...(yield* RepoSrcPages(web, repo)),
      ...(yield* RepoRawPages(web, repo)),
      ...(yield* RepoBlamePages(web, repo)),
      ...(yield* RepoCommitsPages(web, repo)),
      ...(yield* RepoCommitPages(web, repo)),
      ...(yield* RepoBranchesPages(web, repo)),
      ...(yield* RepoTagsPages(web, repo)),
      ...(yield* RepoReleasesPages(web, repo)),
      ...(yield* RepoLabelsPages(web, repo)),
      ...(yield* RepoMilestonesPages(web, repo)),
      ...(yield* RepoWikiPages(web, repo)),
      ...(yield* RepoIssuesPages(web, repo)),
      ...(yield* RepoPullsPages(web, repo)),
      ...(yield* RepoComparePages(web, repo)),
      ...(yield* PullFilesPages(web, repo)),
      ...(yield* RepoActionPages(web, repo)),
      ...(yield* RepoSettingsPages(web, repo)),
      ...(yield* RepoSettingsAccessPages(web, repo)),
      ...(yield* RepoSettingsProtectionPages(web, repo)),
      ...(yield* HookSettingsPages(web, repo)),
      ...(yield* FeedPages(web, repo))
    ]
    return Layer.mergeAll(HttpRouter.addAll(routes), AssetRoutes, notFoundPages(web))
  })
)
