// The durable mirror jobs: a pull mirror's sync (fetch from its remote through the repository's
// entity, then tell the database) and a push mirror's sync (push to its remote), each a workflow
// with retried steps and a readable row in `jobs`; and the schedule, one cluster cron that starts
// the syncs that are due (a pull mirror's interval is its repository's `mirror_interval`, which
// PATCH /repos/{o}/{r} changes; a push mirror's is its own). A failed sync records its error on
// the job and on the mirror, and leaves the repository as it was (refs move atomically or not).
import { Cron, Effect, Layer, Option, Schema } from "effect"
import { ClusterCron } from "effect/cluster"
import { Activity, Workflow, type WorkflowEngine } from "effect/workflow"
import { Settings } from "../config/Settings.ts"
import { pushed, RefUpdate, subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { refMoves } from "../git/PushLog.ts"
import { gitConfigEnv, RepositoryWriter } from "../git/Repository.ts"
import { JobsRepo } from "../jobs/Repo.ts"
import { finished, step } from "../jobs/Steps.ts"
import { parseGoDuration } from "../lib/Duration.ts"
import { sealer } from "../lib/Sealer.ts"
import { QuotaService } from "../quota/Service.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { checkRemote, gitConfig, sanitize } from "./Policy.ts"
import { MirrorsRepo } from "./Repo.ts"

export const SyncPullMirror = Workflow.make("SyncPullMirror", {
  payload: { repoId: Schema.Number, key: Schema.String },
  idempotencyKey: ({ key }) => key
})

export const SyncPushMirror = Workflow.make("SyncPushMirror", {
  payload: { mirrorId: Schema.Number, key: Schema.String },
  idempotencyKey: ({ key }) => key
})

/** Why a migration's clone failed, as Forgejo words it ("Authentication failed: …", "Migration failed: …"). */
export class MigrationFailed extends Schema.TaggedError<MigrationFailed>()("MigrationFailed", {
  message: Schema.String
}) {}

/**
 * A migration's clone, for a repository whose row and empty directory exist (`creating`): fetch
 * everything, point HEAD at the remote's, tell the database, `ready`. POST /repos/migrate waits
 * for it; if the server stops meanwhile, the workflow resumes at the next start. A failed clone
 * removes the repository (row and directory) and fails with the reason.
 */
export const MigrateRepository = Workflow.make("MigrateRepository", {
  payload: { repoId: Schema.Number, remoteAddress: Schema.String, credentials: Schema.String, mirror: Schema.Boolean },
  error: MigrationFailed,
  idempotencyKey: ({ repoId }) => migrateKey(repoId)
})

export const migrateKey = (repoId: number) => `migrate:${repoId}`
export const MIGRATE_KIND = "migrate"

export const PULL_KIND = "mirror-sync"
export const PUSH_KIND = "push-mirror"

/** Git's branch globs of a push mirror's `branch_filter` as refspecs (all branches when empty). */
export const branchRefspecs = (filter: string) => {
  const globs = filter
    .split(",")
    .map((g) => g.trim())
    .filter((g) => g !== "")
  return (globs.length === 0 ? ["*"] : globs).map((g) => `+refs/heads/${g}:refs/heads/${g}`)
}

/** Records the job and starts the pull mirror's sync (it runs in the background). */
export const startPullSync = (repoId: number, key: string, doerId?: number) =>
  Effect.gen(function* () {
    const jobs = yield* JobsRepo
    yield* jobs.enqueue({ kind: PULL_KIND, key, repoId, ...(doerId === undefined ? {} : { doerId }) })
    yield* SyncPullMirror.execute({ repoId, key }, { discard: true })
  })

/** Records the job and starts the push mirror's sync (it runs in the background). */
export const startPushSync = (mirror: { readonly id: number; readonly repoId: number }, key: string, doerId?: number) =>
  Effect.gen(function* () {
    const jobs = yield* JobsRepo
    yield* jobs.enqueue({ kind: PUSH_KIND, key, repoId: mirror.repoId, ...(doerId === undefined ? {} : { doerId }) })
    yield* SyncPushMirror.execute({ mirrorId: mirror.id, key }, { discard: true })
  })

/** A repository and its owner as they are now, and its directory. */
const located = (repoId: number) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const users = yield* UsersRepo
    const repo = yield* Effect.mapError(repos.getById(repoId), () => `repository ${repoId} no longer exists`)
    const owner = yield* Effect.flatMap(users.findById(repo.ownerId), (found) =>
      Option.isSome(found)
        ? Effect.succeed(found.value)
        : Effect.fail(`the owner of repository ${repoId} no longer exists`)
    )
    return { repo, owner, dir: repos.pathOf(owner, repo) }
  })

/** The git configuration for talking to `address` now: the address checked again (DNS may have changed), credentials opened. */
const remoteConfig = (address: string, sealed: string) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const pin = yield* Effect.mapError(checkRemote(settings, address), (e) => e.message)
    const header = yield* Effect.try({
      try: () => sealer(settings.security.SECRET_KEY, "mirror-credentials").open(sealed),
      catch: () =>
        "the stored credentials of this mirror cannot be read ([security] SECRET_KEY changed?); set them again"
    })
    return gitConfig(pin, header)
  })

/** A clone or fetch git refused, as Forgejo words it. */
export const cloneFailedMessage = (message: string) => {
  const text = sanitize(message).replace(/\s+/g, " ").trim()
  // git says "The requested URL returned error: 401" (or 403); a bare 401/403 could be a port.
  return /Authentication failed|could not read Username|could not read Password|returned error: 40[13]\b/i.test(text)
    ? `Authentication failed: ${text}.`
    : `Migration failed: ${text}.`
}

export const MigrateRepositoryLive = MigrateRepository.toLayer(
  Effect.fnUntraced(function* ({ repoId, remoteAddress, credentials, mirror }) {
    const repos = yield* ReposService
    const rows = yield* ReposRepo
    const mirrors = yield* MirrorsRepo
    const writer = yield* RepositoryWriter
    const events = yield* EventHub
    const job = migrateKey(repoId)
    const cloned = yield* step({
      job,
      name: "clone",
      success: Schema.Void,
      attempts: 1,
      work: Effect.gen(function* () {
        const { dir } = yield* located(repoId)
        const config = yield* remoteConfig(remoteAddress, credentials)
        yield* writer
          .fetchFrom({ id: repoId, dir }, { url: remoteAddress, config, prune: false, setHead: true })
          .pipe(Effect.mapError((e) => cloneFailedMessage(e.message)))
      })
    }).pipe(Effect.result)
    if (cloned._tag === "Failure") {
      yield* Activity.make({
        name: "remove",
        execute: Effect.gen(function* () {
          const found = yield* Effect.result(located(repoId))
          if (found._tag === "Failure") return
          // The directory before the row: run again after a crash in between, this still finds both.
          yield* writer.remove({ id: repoId, dir: found.success.dir }).pipe(Effect.ignore)
          yield* repos.remove(found.success.owner, found.success.repo)
        })
      })
      const message = cloned.failure.message
      return yield* new MigrationFailed({
        message: /^(Authentication|Migration) failed/.test(message) ? message : cloneFailedMessage(message)
      })
    }
    yield* step({
      job,
      name: "record",
      success: Schema.Void,
      work: Effect.gen(function* () {
        const { repo, owner } = yield* located(repoId)
        yield* repos.recordGitChange(owner, repo, { maintain: true })
        yield* rows.setStatus(repoId, "ready")
        if (mirror) yield* mirrors.pullSucceeded(repoId)
        yield* events.publish({ _tag: "MigrateRepository", ...subject(owner, repo, owner) })
      })
    }).pipe(Effect.orDie)
    yield* finished(job)
  })
)

export const SyncPullMirrorLive = SyncPullMirror.toLayer(
  Effect.fnUntraced(
    function* ({ repoId, key }) {
      const mirrors = yield* MirrorsRepo
      const writer = yield* RepositoryWriter
      const events = yield* EventHub

      // The refs the fetch moved (journaled with the step: a sync resumed after a crash publishes them still).
      const fetched = yield* step({
        job: key,
        name: "fetch",
        success: Schema.Array(RefUpdate),
        attempts: 3,
        work: Effect.gen(function* () {
          const { repo, dir } = yield* located(repoId)
          const mirror = yield* Effect.flatMap(mirrors.findPull(repoId), (found) =>
            Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail("this repository is not a mirror")
          )
          const config = yield* remoteConfig(mirror.remoteAddress, mirror.credentials)
          const refs = Git.listRefs(dir).pipe(Effect.mapError((e) => e.message))
          const before = yield* refs
          yield* writer
            .fetchFrom(
              { id: repoId, dir },
              { url: mirror.remoteAddress, config, prune: repo.enablePrune, setHead: false }
            )
            .pipe(Effect.mapError((e) => `fetching from ${mirror.remoteAddress} failed: ${sanitize(e.message)}`))
          return refMoves(before, yield* refs)
        })
      }).pipe(Effect.result)
      if (fetched._tag === "Failure") {
        yield* Activity.make({
          name: "failed",
          execute: mirrors.pullFailed(repoId, fetched.failure.message)
        })
        return
      }
      yield* step({
        job: key,
        name: "record",
        success: Schema.Void,
        work: Effect.gen(function* () {
          const { repo, owner } = yield* located(repoId)
          // Its subscribers record what the database knows of the new refs (src/events).
          if (fetched.success.length > 0) yield* events.publish(pushed(owner, repo, owner, "mirror", fetched.success))
          yield* mirrors.pullSucceeded(repoId)
        })
      })
      yield* finished(key)
    },
    (effect) => Effect.orDie(effect)
  )
)

export const SyncPushMirrorLive = SyncPushMirror.toLayer(
  Effect.fnUntraced(
    function* ({ mirrorId, key }) {
      const mirrors = yield* MirrorsRepo
      const pushed = yield* step({
        job: key,
        name: "push",
        success: Schema.Void,
        attempts: 3,
        work: Effect.gen(function* () {
          const mirror = yield* Effect.flatMap(mirrors.findPushById(mirrorId), (found) =>
            Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail("the push mirror was removed")
          )
          const { dir } = yield* located(mirror.repoId)
          const config = yield* remoteConfig(mirror.remoteAddress, mirror.credentials)
          // Never through the entity: a push only reads this repository.
          yield* Git.inRepo(
            dir,
            [
              "push",
              "--quiet",
              "--force",
              "--prune",
              "--",
              mirror.remoteAddress,
              ...branchRefspecs(mirror.branchFilter),
              "+refs/tags/*:refs/tags/*"
            ],
            { env: gitConfigEnv(config) }
          ).pipe(
            Effect.mapError(
              (e) => `pushing to ${mirror.remoteAddress} failed: ${sanitize(e.stderr.trim() || e.message)}`
            )
          )
        })
      }).pipe(Effect.result)
      yield* Activity.make({
        name: "recorded",
        execute:
          pushed._tag === "Failure"
            ? mirrors.pushFailed(mirrorId, pushed.failure.message)
            : mirrors.pushSucceeded(mirrorId)
      })
      if (pushed._tag === "Success") yield* finished(key)
    },
    (effect) => effect
  )
)

/**
 * Starts again the workflows of jobs that were recorded but whose workflow may never have been
 * started (the server stopped in between): workflows are keyed by their job, so one that does exist
 * is joined, not repeated. A migration whose credentials were not kept (not a mirror) then fails
 * on a private source and its repository is removed: never a half-made one.
 */
export const restartLostJobs = Effect.gen(function* () {
  const mirrors = yield* MirrorsRepo
  for (const job of yield* mirrors.unfinishedJobs([MIGRATE_KIND, PULL_KIND, PUSH_KIND], 10)) {
    if (job.kind === MIGRATE_KIND) {
      yield* MigrateRepository.execute(
        {
          repoId: job.repoId,
          remoteAddress: job.remoteAddress,
          credentials: job.credentials,
          mirror: job.isMirror
        },
        { discard: true }
      )
    } else if (job.kind === PULL_KIND) {
      yield* SyncPullMirror.execute({ repoId: job.repoId, key: job.key }, { discard: true })
    } else {
      const mirrorId = Number(job.key.split(":")[1])
      if (Number.isSafeInteger(mirrorId)) yield* SyncPushMirror.execute({ mirrorId, key: job.key }, { discard: true })
    }
  }
})

/** Starts every sync that is due; each mirror is claimed first, so a sync is started once. */
export const startDueSyncs = Effect.gen(function* () {
  yield* restartLostJobs
  const settings = yield* Settings
  if (!settings.mirror.ENABLED) return
  const mirrors = yield* MirrorsRepo
  const quota = yield* QuotaService
  const now = Date.now()
  for (const mirror of yield* mirrors.allPull) {
    const seconds = parseGoDuration(mirror.interval)
    if (seconds === undefined || seconds <= 0) continue
    const due = mirror.lastAttemptAt.getTime() + seconds * 1000
    if (due > now) continue
    // An owner over quota gets no updates (as mirror-sync answers 413); left unclaimed, the
    // mirror is due again at the next round, so it resumes as soon as there is room.
    if (!(yield* quota.allows(mirror.ownerId, "size:git:all"))) continue
    if (!(yield* mirrors.claimPull(mirror.repoId, new Date(now - seconds * 1000)))) continue
    yield* startPullSync(mirror.repoId, `${PULL_KIND}:${mirror.repoId}:${due}`)
  }
  for (const mirror of yield* mirrors.allPushScheduled) {
    const due = mirror.lastAttemptAt.getTime() + mirror.intervalSeconds * 1000
    if (due > now) continue
    if (!(yield* mirrors.claimPush(mirror.id, new Date(now - mirror.intervalSeconds * 1000)))) continue
    yield* startPushSync(mirror, `${PUSH_KIND}:${mirror.id}:${due}`)
  }
})

/**
 * One cron for all mirrors: every minute, or every 5 seconds when [mirror] MIN_INTERVAL is below a
 * minute (so that short intervals are kept).
 */
export const MirrorScheduleLive = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    const minimum = settings.mirror.MIN_INTERVAL
    return ClusterCron.make({
      name: "mirror-schedule",
      cron: Cron.parseUnsafe(minimum >= 60 ? "0 * * * * *" : "*/5 * * * * *"),
      execute: startDueSyncs.pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not start the mirror syncs that are due", cause))
      ),
      skipIfOlderThan: "5 minutes"
    })
  })
)

/** What the workflows and the schedule need besides the engine and the cluster. */
export type MirrorRequirements =
  | MirrorsRepo
  | ReposRepo
  | ReposService
  | UsersRepo
  | RepositoryWriter
  | JobsRepo
  | QuotaService
  | Settings
  | WorkflowEngine.WorkflowEngine
