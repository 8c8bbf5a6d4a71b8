// AGit pull requests (Forgejo's services/agit `ProcReceive`, routers/private/hook_pre_receive.go
// `preReceiveFor`; CONTRACT-PULLS §2): `git push origin HEAD:refs/for/<base>[/<topic>]` with
// `-o topic=… -o title=… -o description=… -o force-push` opens a pull request into `<base>`, or
// updates the open one of the same topic by the same pusher, without a branch or a fork: the
// commits live only in `refs/pull/{n}/head`, and the head branch shown is `{pusher}/{topic}`.
//
// git hands the `refs/for/…` commands of a push to its proc-receive hook (src/git/ProcReceive.ts),
// which asks this receiver over loopback with the push's sealed session (repository, pusher); the
// answer says, per command, the ref it became or why it was refused, and the pusher sees the pull
// request's address as Forgejo prints it. Anyone who may read the repository's code and pull
// requests may push there (src/repos/GitHttp.ts lets such readers through to git, whose
// pre-receive hook then refuses them every other ref).
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import { type HookServer, startSessionServer } from "../git/Hook.ts"
import * as Merge from "../git/Merge.ts"
import { type ProcResult, parseProcReceiveInput, procReceiveAnswer } from "../git/ProcReceive.ts"
import type { Principal } from "../http/Caller.ts"
import { IssuesService } from "../issues/Service.ts"
import { branchNameProblem } from "../lib/Names.ts"
import { type OpenedRepository, RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { PullsService, pullRef } from "./Service.ts"

/** What a push's session says: the repository and the pushing user. */
interface Session {
  readonly repoId: number
  readonly userId: number
}

/** Forgejo's push options (modules/git/pushoptions): `key=value`, or `key` alone for "true". */
const pushOptions = (lines: ReadonlyArray<string>): ReadonlyMap<string, string> =>
  new Map(
    lines.map((line) => {
      const at = line.indexOf("=")
      return at < 0 ? [line, "true"] : [line.slice(0, at), line.slice(at + 1)]
    })
  )

const FOR = "refs/for/"

const messageOf = (error: unknown) =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : "the pull request could not be opened"

export class AgitReceiver extends Context.Service<
  AgitReceiver,
  {
    /**
     * The environment for a push's `git receive-pack` that lets its proc-receive hook ask this
     * receiver; nothing for a deploy key (`pusher` undefined), which opens no pull requests.
     */
    readonly envFor: (repo: RepoRow, pusher: UserRow | undefined) => Record<string, string>
  }
>()("hearth/pulls/AgitReceiver") {
  static readonly layer = Layer.effect(
    AgitReceiver,
    Effect.gen(function* () {
      const settings = yield* Settings
      const pulls = yield* PullsService
      const issues = yield* IssuesService
      const reposRepo = yield* ReposRepo
      const repos = yield* ReposService
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const context = yield* Effect.context<never>()

      const branchSha = (path: string, branch: string) =>
        branchNameProblem(branch) !== undefined
          ? Effect.succeed(undefined)
          : Effect.map(Effect.orDie(Git.revParse(path, `refs/heads/${branch}`)), Option.getOrUndefined)

      /** Forgejo's split of `refs/for/<rest>`: `<rest>` is the base branch, or its first prefix that is one. */
      const splitFor = (path: string, rest: string, topic: string) =>
        Effect.gen(function* () {
          const whole = yield* branchSha(path, rest)
          if (whole !== undefined) return { base: rest, baseSha: whole, topic }
          for (let at = rest.indexOf("/"); at > 0 && at < rest.length - 1; at = rest.indexOf("/", at + 1)) {
            const sha = yield* branchSha(path, rest.slice(0, at))
            if (sha !== undefined) return { base: rest.slice(0, at), baseSha: sha, topic: rest.slice(at + 1) }
          }
          return undefined
        })

      /** The commit's message: its first line as the title, what follows the first blank line as the body. */
      const messageParts = (path: string, sha: string) =>
        Effect.map(Effect.orDie(Git.inRepo(path, ["log", "-1", "--format=%B", "--end-of-options", sha, "--"])), (r) => {
          const text = r.stdout.toString("utf8").replace(/\n+$/, "")
          const cut = text.indexOf("\n\n")
          return { title: text.split("\n")[0] ?? "", body: cut < 0 ? "" : text.slice(cut + 2) }
        })

      const receive = Effect.fn("Agit.receive")(function* (session: Session, body: string) {
        const { commands, options } = parseProcReceiveInput(body)
        const refuseAll = (reason: string) =>
          procReceiveAnswer(
            commands.map((c): ProcResult => ({ ok: false, ref: c.ref, reason })),
            []
          )
        const repo = yield* reposRepo.findById(session.repoId)
        if (Option.isNone(repo)) return refuseAll("the repository no longer exists")
        const owner = yield* users.findById(repo.value.ownerId)
        const pusher = yield* users.findById(session.userId)
        if (Option.isNone(owner) || Option.isNone(pusher))
          return refuseAll("the repository or the pusher no longer exists")
        const caller: Principal = { user: pusher.value, scopes: undefined, method: "password" }
        const access = yield* policy.access(caller, repo.value, owner.value)
        const opened: OpenedRepository = {
          owner: owner.value,
          repo: repo.value,
          access,
          path: repos.pathOf(owner.value, repo.value),
          caller
        }
        // Forgejo's preReceiveFor: whoever may read the pull requests may open one.
        if (repoRefusal(caller, opened, { role: "read", unit: "pulls" }) !== undefined) {
          return refuseAll("User permission denied for creating pull-request.")
        }
        const given = pushOptions(options)
        const topicOption = given.get("topic") ?? ""
        const title = given.get("title")
        const description = given.get("description")
        const force = given.has("force-push")
        // Forgejo's binding of the options: `MaxSize(100);GitRefName` and `MaxSize(255)`.
        if (topicOption.length > 100 || (topicOption !== "" && branchNameProblem(topicOption) !== undefined)) {
          return refuseAll(`the topic "${topicOption}" is not a valid branch name of at most 100 characters`)
        }
        if (title !== undefined && [...title].length > 255) return refuseAll("the title is longer than 255 characters")

        const results: Array<ProcResult> = []
        const addresses: Array<string> = []
        for (const command of commands) {
          const refuse = (reason: string) => results.push({ ok: false, ref: command.ref, reason })
          if (/^0+$/.test(command.newSha)) {
            refuse("Cannot delete a non-existent branch.")
            continue
          }
          if (!command.ref.startsWith(FOR)) {
            refuse(`Unexpected ref: ${command.ref}`)
            continue
          }
          const split = yield* splitFor(opened.path, command.ref.slice(FOR.length), topicOption)
          if (split === undefined) {
            refuse(
              repo.value.isEmpty
                ? "Can't create pull request for an empty repository."
                : `Unexpected ref: ${command.ref}`
            )
            continue
          }
          if (split.topic === "") {
            refuse("The topic-branch option is not set")
            continue
          }
          if (branchNameProblem(split.topic) !== undefined) {
            refuse(`the topic "${split.topic}" is not a valid branch name`)
            continue
          }
          // The pusher's name in the head branch keeps users' topics apart.
          const prefix = `${pusher.value.name.toLowerCase()}/`
          const headBranch = split.topic.startsWith(prefix) ? split.topic : `${prefix}${split.topic}`
          yield* Effect.gen(function* () {
            const existing = yield* pulls.findAgit(opened, split.base, headBranch)
            if (Option.isNone(existing)) {
              if (yield* Merge.isAncestor(opened.path, command.newSha, split.baseSha)) {
                return refuse("The target branch already contains this commit")
              }
              const fromCommit =
                title === undefined || title === "" || description === undefined || description === ""
                  ? yield* messageParts(opened.path, command.newSha)
                  : undefined
              const loaded = yield* pulls.openAgit(opened, {
                baseBranch: split.base,
                headBranch,
                headSha: command.newSha,
                title: title !== undefined && title !== "" ? title : (fromCommit?.title ?? ""),
                body: description !== undefined && description !== "" ? description : (fromCommit?.body ?? "")
              })
              results.push({
                ok: true,
                ref: command.ref,
                refname: pullRef(loaded.issue.index),
                oldSha: Git.ZERO_SHA,
                newSha: command.newSha
              })
              return addresses.push(
                `${settings.server.ROOT_URL}${owner.value.name}/${repo.value.name}/pulls/${loaded.issue.index}`
              )
            }
            const loaded = existing.value
            const index = String(loaded.issue.index)
            if (title !== undefined && title !== "" && title !== loaded.issue.title) {
              yield* issues.edit(opened, index, { title })
            }
            if (description !== undefined && description !== loaded.issue.body) {
              yield* issues.edit(opened, index, { body: description })
            }
            const before = loaded.pull.headSha
            let forced = false
            if (before !== command.newSha) {
              if (!force && !(yield* Merge.isAncestor(opened.path, before, command.newSha))) {
                return refuse(
                  "Updates were rejected because the tip of your current branch is behind its remote counterpart. " +
                    "If this is intentional, set the `force-push` option by adding `-o force-push=true` to your `git push` command."
                )
              }
              forced = (yield* pulls.pushAgit(loaded, pusher.value, command.newSha)).forced
            }
            results.push({
              ok: true,
              ref: command.ref,
              refname: pullRef(loaded.issue.index),
              oldSha: before,
              newSha: command.newSha,
              forced
            })
            return addresses.push(`${settings.server.ROOT_URL}${owner.value.name}/${repo.value.name}/pulls/${index}`)
          }).pipe(Effect.catch((error) => Effect.sync(() => refuse(messageOf(error)))))
        }
        // What Forgejo's post-receive prints for a `refs/pull/{n}/head` it was told about.
        const messages = addresses.flatMap((url) => ["", "Visit the existing pull request:", `  ${url}`, ""])
        return procReceiveAnswer(results, messages)
      })

      const server: HookServer<Session> = yield* Effect.acquireRelease(
        Effect.promise(() =>
          startSessionServer<Session>(
            "/proc-receive",
            { url: "HEARTH_AGIT_URL", session: "HEARTH_AGIT_SESSION" },
            ({ session, body }) => Effect.runPromiseWith(context)(receive(session, body))
          )
        ),
        (started) => Effect.promise(() => started.close())
      )

      return AgitReceiver.of({
        envFor: (repo, pusher) => (pusher === undefined ? {} : server.envFor({ repoId: repo.id, userId: pusher.id }))
      })
    })
  )
}
