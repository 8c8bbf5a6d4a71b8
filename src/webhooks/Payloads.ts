// The event payloads hooks receive (Forgejo's modules/structs/hook.go, built as its
// services/webhook/notifier.go does): repository and user objects as the API shows them to an
// anonymous reader, commits of a push read from git. Built once per event and hook event type, when
// the event is handled (rows read as they are then: a repository deleted since is described from
// the event itself).
import { Context, Effect, Option } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import type * as Events from "../events/Events.ts"
import { ZERO_SHA } from "../git/Git.ts"
import { pushedCommits } from "../git/PushedCommits.ts"
import { formatTime } from "../http/Json.ts"
import { makePresenter } from "../issues/Present.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { makeReleasePresenter } from "../releases/Present.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { StatusesRepo } from "../statuses/Repo.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"

type Json = Record<string, unknown>

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export interface PayloadCommit {
  readonly id: string
  readonly message: string
  readonly url: string
  readonly author: { readonly name: string; readonly email: string; readonly username: string }
  readonly committer: { readonly name: string; readonly email: string; readonly username: string }
  readonly verification: null
  readonly timestamp: string
  readonly added: Array<string> | null
  readonly removed: Array<string> | null
  readonly modified: Array<string> | null
}

/**
 * Rows one event's payloads share (its repository and owner, the sender, commit authors by
 * e-mail), read once while that event's hook events are built (src/webhooks/Service.ts provides a
 * fresh map per event) rather than once per ref and type; without one every build reads afresh.
 */
export const PayloadReads = Context.Reference<Map<string, Effect.Effect<unknown>> | undefined>(
  "hearth/webhooks/PayloadReads",
  { defaultValue: () => undefined }
)

const once = <A>(key: string, read: Effect.Effect<A>): Effect.Effect<A> =>
  Effect.gen(function* () {
    const reads = yield* PayloadReads
    if (reads === undefined) return yield* read
    let cached = reads.get(key)
    if (cached === undefined) {
      cached = yield* Effect.cached(read)
      reads.set(key, cached)
    }
    return (yield* cached) as A
  })

export const makePayloads = (settings: SettingsShape) =>
  Effect.gen(function* () {
    const repos = yield* ReposRepo
    const reposService = yield* ReposService
    const users = yield* UsersRepo
    const presenter = yield* RepoPresenter
    const issueRows = yield* IssuesRepo
    const issuePresenter = yield* makePresenter(settings)
    const releasePresenter = yield* makeReleasePresenter(settings)
    const statusRows = yield* StatusesRepo
    const root = settings.server.ROOT_URL

    const user = (id: number, fallbackName: string) =>
      Effect.map(once(`user:${id}`, users.findById(id)), (found) =>
        Option.isSome(found)
          ? (toApiUser(settings, found.value, undefined) as Json)
          : ({ id, login: fallbackName, username: fallbackName, full_name: "", email: "" } as Json)
      )

    /** The repository now (with its owner), if it still exists. */
    const current = (id: number) =>
      once(
        `repo:${id}`,
        Effect.gen(function* () {
          const repo = yield* repos.findById(id)
          if (Option.isNone(repo)) return undefined
          const owner = yield* users.findById(repo.value.ownerId)
          return Option.isNone(owner) ? undefined : { repo: repo.value, owner: owner.value }
        })
      )

    /** The repository as payloads show it; `found` when the caller has read it already. */
    const repository = (ref: Events.RepositoryRef, known?: { repo: RepoRow; owner: UserRow } | undefined) =>
      Effect.gen(function* () {
        const found = known ?? (yield* current(ref.id))
        if (found !== undefined)
          return (yield* once(
            `repository:${found.repo.id}`,
            presenter.one(undefined, { ...found, access: OWNER_ACCESS })
          )) as Json
        // Gone (a deleted repository): what the event says of it.
        const fullName = `${ref.ownerName}/${ref.name}`
        return {
          id: ref.id,
          name: ref.name,
          full_name: fullName,
          owner: yield* user(ref.ownerId, ref.ownerName),
          private: ref.private,
          html_url: `${root}${fullName}`
        } as Json
      })

    const about = (event: Events.RepositoryEvent) =>
      Effect.all({ repository: repository(event.repo), sender: user(event.doer.id, event.doer.name) })

    /** Commits `before..after` (newest first, at most `limit`) and how many there are (src/git/PushedCommits.ts). */
    const commitsOf = (found: { repo: RepoRow; owner: UserRow }, before: string, after: string, limit: number) =>
      Effect.gen(function* () {
        const path = reposService.pathOf(found.owner, found.repo)
        const read = yield* pushedCommits(path, before, after, limit).pipe(Effect.orDie)
        const htmlRepo = `${root}${encodeURIComponent(found.owner.name)}/${encodeURIComponent(found.repo.name)}`
        const names = new Map<string, string>()
        const usernameOf = (email: string) =>
          Effect.gen(function* () {
            const known = names.get(email)
            if (known !== undefined) return known
            const row = yield* once(`email:${email}`, users.findByEmail(email))
            const name = Option.isSome(row) ? row.value.name : ""
            names.set(email, name)
            return name
          })
        const commits: Array<PayloadCommit> = []
        for (const c of read.commits.slice(0, limit)) {
          commits.push({
            id: c.sha,
            message: c.message,
            url: `${htmlRepo}/commit/${c.sha}`,
            author: { name: c.authorName, email: c.authorEmail, username: yield* usernameOf(c.authorEmail) },
            committer: {
              name: c.committerName,
              email: c.committerEmail,
              username: yield* usernameOf(c.committerEmail)
            },
            verification: null,
            timestamp: formatTime(new Date(c.authorDate === "" ? c.committerDate : c.authorDate)),
            added: [...c.added],
            removed: [...c.removed],
            modified: [...c.modified]
          })
        }
        return { commits, total: read.total }
      })

    /** Forgejo's push payload of one ref update. */
    const push = (event: Events.Event & { readonly _tag: "PushCommits" }, update: Events.RefUpdate) =>
      Effect.gen(function* () {
        const found = yield* current(event.repo.id)
        const base = yield* Effect.all({
          repository: repository(event.repo, found),
          // The pusher is most often the owner, read just now.
          sender:
            found !== undefined && found.owner.id === event.doer.id
              ? Effect.succeed(toApiUser(settings, found.owner, undefined) as Json)
              : user(event.doer.id, event.doer.name)
        })
        const branch = update.ref.startsWith("refs/heads/")
        const listed =
          found !== undefined && branch && update.after !== Events_ZERO
            ? yield* commitsOf(found, update.before, update.after, settings.webhook.PAYLOAD_COMMIT_LIMIT)
            : { commits: [], total: 0 }
        const compare =
          update.before === Events_ZERO || update.after === Events_ZERO || listed.commits.length === 0
            ? root
            : `${root}${event.repo.ownerName}/${event.repo.name}/compare/${update.before}...${update.after}`
        return {
          ref: update.ref,
          before: update.before,
          after: update.after,
          compare_url: compare,
          commits: listed.commits,
          total_commits: listed.total,
          head_commit: listed.commits[0] ?? null,
          repository: base.repository,
          pusher: base.sender,
          sender: base.sender
        }
      })

    /** The push payload of a test delivery: one commit, `ref` as given (SPEC Behavior 21). */
    const testPush = (found: { repo: RepoRow; owner: UserRow }, doer: UserRow, ref: string, sha: string) =>
      Effect.gen(function* () {
        const repositoryJson = yield* presenter.one(undefined, { ...found, access: OWNER_ACCESS })
        const sender = toApiUser(settings, doer, undefined)
        const listed = yield* commitsOf(found, Events_ZERO, sha, 1)
        const commit = listed.commits[0]!
        const bare = { ...commit, added: null, removed: null, modified: null }
        return {
          ref,
          before: sha,
          after: sha,
          compare_url: `${root}${found.owner.name}/${found.repo.name}/compare/${sha}...${sha}`,
          commits: [bare],
          total_commits: 1,
          head_commit: bare,
          repository: repositoryJson,
          pusher: sender,
          sender
        }
      })

    const refEvent = (event: Events.RepositoryEvent, update: Events.RefUpdate, kind: "create" | "delete") =>
      Effect.map(about(event), ({ repository, sender }) => {
        const refType = update.ref.startsWith("refs/tags/") ? "tag" : "branch"
        return kind === "create"
          ? { sha: update.after, ref: update.ref, ref_type: refType, repository, sender }
          : { ref: update.ref, ref_type: refType, pusher_type: "user", repository, sender }
      })

    const repositoryEvent = (event: Events.RepositoryEvent, action: "created" | "deleted") =>
      Effect.map(
        Effect.all({ base: about(event), organization: user(event.repo.ownerId, event.repo.ownerName) }),
        ({ base, organization }) => ({ action, repository: base.repository, organization, sender: base.sender })
      )

    const fork = (event: Events.Event & { readonly _tag: "ForkRepository" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const source = yield* current(event.source.id)
        const forkee =
          source === undefined
            ? { id: event.source.id, full_name: event.source.fullName }
            : yield* presenter.one(undefined, { ...source, access: OWNER_ACCESS })
        return { forkee, repository: base.repository, sender: base.sender }
      })

    const issueJson = (repoRef: Events.RepositoryRef, issueId: number) =>
      Effect.gen(function* () {
        const row = yield* issueRows.issueById(issueId)
        if (Option.isNone(row)) return undefined
        const place = { id: repoRef.id, ownerName: repoRef.ownerName, name: repoRef.name }
        const [issue] = yield* issuePresenter.issues([row.value], () => place, undefined)
        return { row: row.value, place, issue: issue as unknown as Json }
      })

    const issues = (event: Events.Event & { readonly _tag: "Issues" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const found = yield* issueJson(event.repo, event.issue.id)
        const item = found?.issue ?? { id: event.issue.id, number: event.issue.index }
        return {
          action: event.action,
          number: event.issue.index,
          ...(event.changes === undefined ? {} : { changes: event.changes }),
          ...(event.issue.isPull ? { pull_request: item, requested_reviewer: null, review: null } : { issue: item }),
          repository: base.repository,
          sender: base.sender,
          commit_id: ""
        }
      })

    const issueComment = (event: Events.Event & { readonly _tag: "IssueComment" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const found = yield* issueJson(event.repo, event.issue.id)
        let comment: Json = { id: event.comment.id }
        if (found !== undefined) {
          const row = yield* issueRows.commentById(event.comment.id)
          if (Option.isSome(row)) {
            const [shown] = yield* issuePresenter.comments([row.value], () => found.row, found.place)
            comment = shown as unknown as Json
          }
        }
        const issue = found?.issue ?? { id: event.issue.id, number: event.issue.index }
        return {
          action: event.action,
          issue,
          ...(event.issue.isPull ? { pull_request: issue } : {}),
          comment,
          ...(event.changes === undefined ? {} : { changes: event.changes }),
          repository: base.repository,
          sender: base.sender,
          is_pull: event.issue.isPull
        }
      })

    /** Forgejo's PullRequestPayload for `pull_request_sync` (action `synchronized`). */
    const pullSync = (event: Events.Event & { readonly _tag: "PullRequestSynchronized" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const found = yield* issueJson(event.repo, event.issue.id)
        return {
          action: "synchronized",
          number: event.issue.index,
          pull_request: found?.issue ?? { id: event.issue.id, number: event.issue.index },
          requested_reviewer: null,
          review: null,
          repository: base.repository,
          sender: base.sender,
          commit_id: event.after
        }
      })

    /**
     * Forgejo's PullRequestPayload of a submitted review (action `reviewed`): `review.type` is the
     * hook event type, the sender and `requested_reviewer` the reviewer.
     */
    const pullReview = (event: Events.Event & { readonly _tag: "PullRequestReview" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const found = yield* issueJson(event.repo, event.issue.id)
        return {
          action: "reviewed",
          number: event.issue.index,
          pull_request: found?.issue ?? { id: event.issue.id, number: event.issue.index },
          requested_reviewer: base.sender,
          review: { type: `pull_request_review_${event.review.type}`, content: event.review.content },
          repository: base.repository,
          sender: base.sender,
          commit_id: ""
        }
      })

    /** Forgejo's PullRequestPayload of a review request (`review_requested` / `review_request_removed`). */
    const pullReviewRequest = (event: Events.Event & { readonly _tag: "PullRequestReviewRequest" }) =>
      Effect.gen(function* () {
        const base = yield* about(event)
        const found = yield* issueJson(event.repo, event.issue.id)
        return {
          action: event.requested ? "review_requested" : "review_request_removed",
          number: event.issue.index,
          pull_request: found?.issue ?? { id: event.issue.id, number: event.issue.index },
          requested_reviewer: yield* user(event.reviewer.id, event.reviewer.name),
          review: null,
          repository: base.repository,
          sender: base.sender,
          commit_id: ""
        }
      })

    /** Forgejo's WikiPayload (`renamed` as the SPEC names it; Forgejo sends `edited`). */
    const wiki = (event: Events.Event & { readonly _tag: "Wiki" }) =>
      Effect.map(about(event), ({ repository, sender }) => ({
        action: event.action,
        repository,
        sender,
        page: event.page,
        comment: event.comment
      }))

    /** Forgejo's ReleasePayload: the release as the event saw it, with the assets it has now. */
    const release = (event: Events.Event & { readonly _tag: "Release" }) =>
      Effect.gen(function* () {
        const { repository, sender } = yield* about(event)
        const snapshot = event.release
        const [shown] = yield* releasePresenter(
          { ownerName: event.repo.ownerName, repoName: event.repo.name },
          [{ ...snapshot, createdAt: new Date(snapshot.createdAt) }],
          undefined
        )
        return { action: event.action, release: shown, repository, sender }
      })

    /**
     * Gitea's CommitStatusPayload (services/webhook/notifier.go `CreateCommitStatus`): the status
     * as the API shows it (`id` its index, as the CommitStatus JSON) and the commit as a push lists it.
     */
    const status = (event: Events.Event & { readonly _tag: "CommitStatus" }) =>
      Effect.gen(function* () {
        const { repository, sender } = yield* about(event)
        const found = yield* current(event.repo.id)
        const row = Option.getOrUndefined(yield* statusRows.find(event.repo.id, event.sha, event.index))
        // The commit may be gone since (a force push and a gc): the payload then has none.
        const commit =
          found === undefined
            ? null
            : ((yield* commitsOf(found, Events_ZERO, event.sha, 1).pipe(
                Effect.catchDefect(() => Effect.succeed({ commits: [], total: 0 }))
              )).commits[0] ?? null)
        const createdAt = row === undefined ? null : formatTime(row.createdAt)
        return {
          commit,
          context: event.context,
          created_at: createdAt,
          description: row?.description ?? "",
          id: event.index,
          repository,
          sender,
          sha: event.sha,
          state: event.state,
          target_url: row?.targetUrl ?? "",
          // As the CommitStatus JSON: the creation time (statuses are never updated).
          updated_at: createdAt
        }
      })

    return {
      push,
      testPush,
      refEvent,
      repositoryEvent,
      fork,
      issues,
      issueComment,
      pullSync,
      pullReview,
      pullReviewRequest,
      wiki,
      release,
      status,
      current
    }
  })

const Events_ZERO = ZERO_SHA

export type Payloads = Effect.Success<ReturnType<typeof makePayloads>>
