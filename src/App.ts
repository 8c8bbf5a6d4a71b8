// The application's services on top of the configured database.
import { Layer } from "effect"
import { FederationRepo } from "../federation/Repo.ts"
import { Federation } from "../federation/Service.ts"
import { FederatedSocial } from "../federation/Social.ts"
import { ActivitiesRepo } from "./activities/Repo.ts"
import { ActivitiesService } from "./activities/Service.ts"
import { AdminRepo } from "./admin/Repo.ts"
import { AdminUsers } from "./admin/Service.ts"
import { AdminSite } from "./admin/Site.ts"
import { AssigneesRepo } from "./assignees/Repo.ts"
import { Authenticator } from "./auth/Authenticator.ts"
import { HttpSignatures } from "./auth/HttpSignature.ts"
import { AvatarsRepo } from "./avatars/Repo.ts"
import { AvatarsService } from "./avatars/Service.ts"
import { BlocksRepo } from "./blocks/Repo.ts"
import { BlocksService } from "./blocks/Service.ts"
import type { Settings } from "./config/Settings.ts"
import { ContentsService } from "./contents/Service.ts"
import * as Database from "./db/Database.ts"
import { EmailsRepo } from "./emails/Repo.ts"
import { EmailsService } from "./emails/Service.ts"
import { EventHub } from "./events/Hub.ts"
import { FlagsRepo } from "./flags/Repo.ts"
import { FollowsRepo } from "./follows/Repo.ts"
import { FollowsService } from "./follows/Service.ts"
import { ForksService } from "./forks/Service.ts"
import { ForkSync } from "./forks/Sync.ts"
import { ForkRepositoryLive } from "./forks/Workflow.ts"
import { InstanceSigning } from "./git/Signing.ts"
import { CommitSigner } from "./git/SigningRules.ts"
import { GitDataService } from "./gitdata/Service.ts"
import { GpgRepo } from "./gpg/Repo.ts"
import { GpgService } from "./gpg/Service.ts"
import { IssueAttachments } from "./issues/Attachments.ts"
import { AttachmentsRepo } from "./issues/AttachmentsRepo.ts"
import { IssueDeps } from "./issues/Deps.ts"
import { IssueDepsRepo } from "./issues/DepsRepo.ts"
import { IssueExtras } from "./issues/Extras.ts"
import { IssueExtrasRepo } from "./issues/ExtrasRepo.ts"
import { IssuesRepo } from "./issues/Repo.ts"
import { IssuesService } from "./issues/Service.ts"
import { IssueTemplates } from "./issues/Templates.ts"
import { IssueTimes } from "./issues/Times.ts"
import { IssueTimesRepo } from "./issues/TimesRepo.ts"
import { CommandEntitiesLayer, EntitiesLayer } from "./jobs/Cluster.ts"
import { CronTasks } from "./jobs/Cron.ts"
import { DeliveryQueue } from "./jobs/Queue.ts"
import { RecoveryLive } from "./jobs/Recovery.ts"
import { JobsRepo } from "./jobs/Repo.ts"
import { KeysRepo } from "./keys/Repo.ts"
import { KeysService } from "./keys/Service.ts"
import { LanguagesRepo } from "./languages/Repo.ts"
import { LanguagesService } from "./languages/Service.ts"
import { MarkdownRenderer } from "./markdown/Service.ts"
import { MirrorsRepo } from "./mirrors/Repo.ts"
import { MirrorsService } from "./mirrors/Service.ts"
import {
  MigrateRepositoryLive,
  MirrorScheduleLive,
  SyncPullMirrorLive,
  SyncPushMirrorLive
} from "./mirrors/Workflow.ts"
import { NotificationsRepo } from "./notifications/Repo.ts"
import { NotificationsService } from "./notifications/Service.ts"
import { OAuth2Repo } from "./oauth2/Repo.ts"
import { OAuth2Service } from "./oauth2/Service.ts"
import { OrgPolicy } from "./orgs/Policy.ts"
import { OrgsRepo } from "./orgs/Repo.ts"
import { OrgsService } from "./orgs/Service.ts"
import { PackageCleanup } from "./packages/Cleanup.ts"
import { PackagePolicy } from "./packages/Policy.ts"
import { PackagesRepo } from "./packages/Repo.ts"
import { PackagesService } from "./packages/Service.ts"
import { PushGate } from "./protection/Push.ts"
import { ProtectionRepo } from "./protection/Repo.ts"
import { ProtectionService } from "./protection/Service.ts"
import { AgitReceiver } from "./pulls/Agit.ts"
import { AutoMerge } from "./pulls/AutoMerge.ts"
import { AutoMergeStore } from "./pulls/AutoMergeStore.ts"
import { PullPresenter } from "./pulls/Present.ts"
import { PullsRepo } from "./pulls/Repo.ts"
import { PullsService } from "./pulls/Service.ts"
import { QuotaRepo } from "./quota/Repo.ts"
import { QuotaService } from "./quota/Service.ts"
import { ReleaseAssets } from "./releases/Assets.ts"
import { AssetsRepo } from "./releases/AssetsRepo.ts"
import { ReleasesRepo } from "./releases/Repo.ts"
import { ReleasesService } from "./releases/Service.ts"
import { RepoPolicy } from "./repos/Policy.ts"
import { RepoPresenter } from "./repos/Present.ts"
import { ReposRepo } from "./repos/Repo.ts"
import { ReposService } from "./repos/Service.ts"
import { ReviewsRepo } from "./reviews/Repo.ts"
import { ReviewsService } from "./reviews/Service.ts"
import { SessionsRepo } from "./sessions/Repo.ts"
import { Sessions } from "./sessions/Service.ts"
import { SocialRepo } from "./social/Repo.ts"
import { SocialService } from "./social/Service.ts"
import { StatusesRepo } from "./statuses/Repo.ts"
import { StatusesService } from "./statuses/Service.ts"
import { BlobStorage } from "./storage/Service.ts"
import { TokensRepo } from "./tokens/Repo.ts"
import { TokensService } from "./tokens/Service.ts"
import { TopicsRepo } from "./topics/Repo.ts"
import { TopicsService } from "./topics/Service.ts"
import { TransfersRepo } from "./transfers/Repo.ts"
import { TransfersService } from "./transfers/Service.ts"
import { TwoFactor } from "./twofa/Service.ts"
import { AccountPolicy } from "./users/Policy.ts"
import { AccountRename } from "./users/Rename.ts"
import { UsersRepo } from "./users/Repo.ts"
import { UsersService } from "./users/Service.ts"
import { WebhooksRepo } from "./webhooks/Repo.ts"
import { WebhooksService } from "./webhooks/Service.ts"
import { WikiService } from "./wiki/Service.ts"

const Repos = Layer.mergeAll(
  UsersRepo.layer,
  TokensRepo.layer,
  TwoFactor.layer,
  AccountPolicy.layer,
  AdminRepo.layer,
  OrgsRepo.layer,
  ReposRepo.layer,
  SocialRepo.layer,
  JobsRepo.layer,
  TransfersRepo.layer,
  MirrorsRepo.layer,
  KeysRepo.layer,
  FederationRepo.layer,
  QuotaRepo.layer,
  BlocksRepo.layer,
  TopicsRepo.layer,
  AssigneesRepo.layer,
  FlagsRepo.layer,
  AvatarsRepo.layer,
  IssuesRepo.layer,
  IssueExtrasRepo.layer,
  IssueDepsRepo.layer,
  IssueTimesRepo.layer,
  AttachmentsRepo.layer,
  LanguagesRepo.layer,
  SessionsRepo.layer,
  NotificationsRepo.layer,
  StatusesRepo.layer,
  ProtectionRepo.layer,
  PullsRepo.layer,
  ReviewsRepo.layer,
  WebhooksRepo.layer,
  ReleasesRepo.layer,
  AssetsRepo.layer,
  PackagesRepo.layer,
  ActivitiesRepo.layer
)
// Built on UsersRepo (counters and the name cache).
const IdentityRepos = Layer.mergeAll(FollowsRepo.layer, EmailsRepo.layer, OAuth2Repo.layer, GpgRepo.layer)

// Services built on other services come first: AdminUsers deletes organizations through
// OrgsService, and both refuse or purge through ReposService.
export const Services = Layer.mergeAll(
  AdminUsers.layer,
  AdminSite.layer,
  WebhooksService.layer,
  MarkdownRenderer.layer,
  // Scheduled merges, reviews and AGit pushes (asked by git over HTTP and SSH) act on pull
  // requests: built on their service, which schedules through the scheduled merges' store.
  Layer.mergeAll(AutoMerge.layer, ReviewsService.layer, AgitReceiver.layer).pipe(
    Layer.provideMerge(PullPresenter.layer),
    Layer.provideMerge(PullsService.layer),
    Layer.provideMerge(AutoMergeStore.layer)
  ),
  IssueExtras.layer,
  IssueDeps.layer,
  IssueTimes.layer,
  IssueAttachments.layer,
  SocialService.layer,
  // Issue templates and git data are read from git through the contents reader.
  Layer.mergeAll(IssueTemplates.layer, GitDataService.layer).pipe(Layer.provideMerge(ContentsService.layer)),
  ForksService.layer,
  ForkSync.layer,
  TransfersService.layer,
  MirrorsService.layer,
  KeysService.layer,
  TopicsService.layer,
  ReleasesService.layer,
  ReleaseAssets.layer,
  AvatarsService.layer,
  PackagesService.layer.pipe(Layer.provideMerge(PackagePolicy.layer)),
  PackageCleanup.layer,
  StatusesService.layer,
  PushGate.layer,
  WikiService.layer,
  Sessions.layer,
  HttpSignatures.layer,
  FollowsService.layer,
  OAuth2Service.layer,
  GpgService.layer.pipe(Layer.provideMerge(EmailsService.layer)),
  FederatedSocial.layer.pipe(Layer.provideMerge(Federation.layer)),
  // Activity feeds: written by an event hub subscriber, read by /…/activities/feeds.
  ActivitiesService.layer
).pipe(
  // Notifications present repositories, as several services above do.
  Layer.provideMerge(NotificationsService.layer),
  Layer.provideMerge(RepoPresenter.layer),
  // The markdown renderer links only the issues its reader may see.
  Layer.provideMerge(IssuesService.layer),
  Layer.provideMerge(Layer.mergeAll(OrgsService.layer, AccountRename.layer)),
  Layer.provideMerge(ReposService.layer),
  // When the commits Hearth makes are signed ([repository.signing] rules), and commit verification.
  Layer.provideMerge(CommitSigner.layer),
  // Branch and tag protection: asked by the contents and branch APIs and the push hook.
  Layer.provideMerge(ProtectionService.layer),
  // Refusals a block causes are checked by the services above (follows, stars, transfers).
  Layer.provideMerge(BlocksService.layer),
  Layer.provideMerge(LanguagesService.layer),
  Layer.provideMerge(RepoPolicy.layer),
  Layer.provideMerge(Layer.mergeAll(UsersService.layer, TokensService.layer, OrgPolicy.layer)),
  Layer.provideMerge(Authenticator.layer),
  // Every service that grows what an account stores checks its quota first.
  Layer.provideMerge(QuotaService.layer),
  Layer.provideMerge(IdentityRepos),
  Layer.provideMerge(EventHub.layer),
  // The instance's commit-signing key ([repository.signing]), read or made once at start.
  Layer.provideMerge(InstanceSigning.layer),
  Layer.provideMerge(DeliveryQueue.layer),
  Layer.provideMerge(Repos)
)

/** Durable jobs: each workflow's implementation, run on the services above. */
const Workflows = Layer.mergeAll(
  ForkRepositoryLive,
  RecoveryLive,
  MigrateRepositoryLive,
  SyncPullMirrorLive,
  SyncPushMirrorLive,
  MirrorScheduleLive,
  // The periodic tasks by Forgejo's names, run on demand (GET/POST /admin/cron).
  CronTasks.layer
)

const appLayer = <E, R>(entities: Layer.Layer<Layer.Success<typeof EntitiesLayer>, E, R>) =>
  Workflows.pipe(
    Layer.provideMerge(Services),
    Layer.provideMerge(BlobStorage.layer),
    Layer.provideMerge(entities),
    Layer.provideMerge(Database.layer)
  )

/** Everything the HTTP server needs, given `Settings`. */
export const AppLayer = appLayer(EntitiesLayer)

/** The same services for the CLI's commands, which leave the server's durable jobs alone. */
export const CommandAppLayer = appLayer(CommandEntitiesLayer)

export type AppRequirements = Settings
