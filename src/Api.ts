// The whole /api/v1 surface: every resource's group, then the API-wide middleware (which only
// applies to endpoints added before it, so it comes last). Every endpoint names its OpenAPI
// operation (`.annotate(OpenApi.Identifier, …)`): Forgejo's operationId for a route Forgejo has, so
// that clients generated from either document match, else one in the same style (`repoListJobs`).
import { HttpApi, OpenApi } from "effect/http-api"
import { FederationApi } from "../federation/Api.ts"
import { ActivitiesApi } from "./activities/Api.ts"
import { AdminApi, AdminUsersApi } from "./admin/Api.ts"
import { AssigneesApi } from "./assignees/Api.ts"
import { Authentication } from "./auth/Authentication.ts"
import { AvatarsApi } from "./avatars/Api.ts"
import { BlocksApi } from "./blocks/Api.ts"
import { BranchesApi } from "./branches/Api.ts"
import { ContentsApi } from "./contents/Api.ts"
import { EmailsApi } from "./emails/Api.ts"
import { FlagsApi } from "./flags/Api.ts"
import { FollowsApi } from "./follows/Api.ts"
import { ForksApi } from "./forks/Api.ts"
import { GitDataApi } from "./gitdata/Api.ts"
import { GpgApi } from "./gpg/Api.ts"
import { JsonBodyCheck } from "./http/Edge.ts"
import { ErrorResponses } from "./http/Middleware.ts"
import { InstanceApi } from "./instance/Api.ts"
import { IssuesApi, LabelsApi, MilestonesApi } from "./issues/Api.ts"
import { IssueAttachmentsApi } from "./issues/AttachmentsApi.ts"
import { IssueDepsApi } from "./issues/DepsApi.ts"
import { IssueExtrasApi } from "./issues/ExtrasApi.ts"
import { IssueTemplatesApi } from "./issues/TemplatesApi.ts"
import { IssueTimesApi } from "./issues/TimesApi.ts"
import { JobsApi } from "./jobs/Api.ts"
import { KeysApi } from "./keys/Api.ts"
import { LanguagesApi } from "./languages/Api.ts"
import { MarkdownApi } from "./markdown/Api.ts"
import { MirrorsApi } from "./mirrors/Api.ts"
import { MiscApi } from "./misc/Api.ts"
import { NotificationsApi } from "./notifications/Api.ts"
import { OAuth2Api } from "./oauth2/Api.ts"
import { OrgsApi } from "./orgs/Api.ts"
import { PackageCleanupApi, PackagesApi } from "./packages/Api.ts"
import { ProtectionApi } from "./protection/Api.ts"
import { PullsApi } from "./pulls/Api.ts"
import { QuotaApi } from "./quota/Api.ts"
import { ReleasesApi } from "./releases/Api.ts"
import { ReposApi } from "./repos/Api.ts"
import { RepoAssignment } from "./repos/Assignment.ts"
import { ReviewsApi } from "./reviews/Api.ts"
import { SocialApi } from "./social/Api.ts"
import { StatusesApi } from "./statuses/Api.ts"
import { TemplatesApi } from "./templates/Api.ts"
import { TokensApi } from "./tokens/Api.ts"
import { TopicsApi } from "./topics/Api.ts"
import { TransfersApi } from "./transfers/Api.ts"
import { TwoFactorApi } from "./twofa/Api.ts"
import { UsersApi } from "./users/Api.ts"
import { AccountRedirect } from "./users/Assignment.ts"
import { UserSettingsApi } from "./usersettings/Api.ts"
import { WebhooksApi } from "./webhooks/Api.ts"
import { WikiApi } from "./wiki/Api.ts"

export class HearthApi extends HttpApi.make("hearth")
  .add(
    MiscApi,
    InstanceApi,
    UsersApi,
    TokensApi,
    TwoFactorApi,
    AdminUsersApi,
    AdminApi,
    OrgsApi,
    ReposApi,
    SocialApi,
    BranchesApi,
    ContentsApi,
    GitDataApi,
    TemplatesApi,
    ForksApi,
    JobsApi,
    TransfersApi,
    MirrorsApi,
    FollowsApi,
    BlocksApi,
    EmailsApi,
    UserSettingsApi,
    AvatarsApi,
    OAuth2Api,
    GpgApi,
    KeysApi,
    LanguagesApi,
    MarkdownApi,
    FederationApi,
    QuotaApi,
    TopicsApi,
    AssigneesApi,
    FlagsApi,
    IssueExtrasApi,
    IssueDepsApi,
    IssueTimesApi,
    IssueTemplatesApi,
    IssueAttachmentsApi,
    IssuesApi,
    LabelsApi,
    MilestonesApi,
    NotificationsApi,
    StatusesApi,
    ProtectionApi,
    WikiApi,
    PullsApi,
    ReviewsApi,
    WebhooksApi,
    ReleasesApi,
    PackagesApi,
    PackageCleanupApi,
    ActivitiesApi
  )
  .prefix("/api/v1")
  // Applied inside out: the repository of the path is resolved after authentication (before the
  // body is looked at, as Forgejo's `repoAssignment` runs before binding), errors are rendered around all.
  .middleware(JsonBodyCheck)
  .middleware(AccountRedirect)
  .middleware(RepoAssignment)
  .middleware(Authentication)
  .middleware(ErrorResponses)
  .annotateMerge(
    OpenApi.annotations({
      title: "Hearth API",
      version: "1.1.1",
      description: "Hearth's Forgejo-compatible REST API (/api/v1)."
    })
  ) {}
