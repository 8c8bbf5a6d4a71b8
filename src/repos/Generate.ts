// A new repository from a template (Forgejo's services/repository/generate.go `GenerateRepository`
// and routers/api/v1/repo/repo.go `Generate`): the template's default branch as one fresh commit,
// with the files that `.forgejo/template` (or `.gitea/template`) names expanded, and the chosen
// items copied (topics, labels, webhooks, branch protection rules, the avatar). Everything that can be refused
// is checked before the repository is made; a failure after that removes it again.
import { Effect, Option } from "effect"
import { AvatarsService } from "../avatars/Service.ts"
import { AVATAR_SIZE } from "../avatars/Url.ts"
import { Settings, type SettingsShape } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Paths from "../git/Paths.ts"
import * as Readers from "../git/Readers.ts"
import { RepositoryWriter, toApiError } from "../git/Repository.ts"
import { signWith } from "../git/Signing.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import * as Write from "../git/Write.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { compileGlob } from "../lib/Glob.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { ProtectionRepo } from "../protection/Repo.ts"
import { TopicsService } from "../topics/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { UsersRepo } from "../users/Repo.ts"
import { gitIdentity } from "../users/Schema.ts"
import { WebhooksRepo } from "../webhooks/Repo.ts"
import type { OpenedRepository } from "./Policy.ts"
import type { RepoRow } from "./Repo.ts"
import { type GenerateRepoOption, sshUrl } from "./Schema.ts"
import { ReposService } from "./Service.ts"

// ---------------------------------------------------------------------------------------------
// Variable expansion (Forgejo's `generateExpansion`).

/** Words of a name: runs of letters and digits, split where a lower-case letter meets an upper-case one and before the last capital of an acronym ("HTTPServer": HTTP, Server); digits stay with the word before them. */
const wordsOf = (value: string): Array<string> =>
  (value.match(/[\p{L}\p{N}]+/gu) ?? []).flatMap(
    (run) => run.match(/\p{Lu}+(?=\p{Lu}\p{Ll})|\p{Lu}?\p{Ll}+\p{N}*|\p{Lu}+\p{N}*|\p{N}+/gu) ?? [run]
  )

const upperFirst = (word: string) => word.charAt(0).toUpperCase() + word.slice(1)

/** Words separated by spaces, underscores and hyphens, each capitalized (xstrings' ToPascalCase). */
const pascal = (value: string) =>
  value
    .split(/[\s_-]+/)
    .map(upperFirst)
    .join("")

/**
 * The transformers of Forgejo's `defaultTransformers` (huandu/xstrings and `util.ToTitleCase`),
 * re-implemented here: the same results for the usual names (words of letters and digits joined by
 * `-`, `_`, spaces or case changes); xstrings' rarer corner cases are not reproduced.
 */
export const TRANSFORMERS: ReadonlyArray<readonly [string, (value: string) => string]> = [
  ["SNAKE", (v) => wordsOf(v).join("_").toLowerCase()],
  ["KEBAB", (v) => wordsOf(v).join("-").toLowerCase()],
  [
    "CAMEL",
    (v) => {
      const p = pascal(v)
      return p.charAt(0).toLowerCase() + p.slice(1)
    }
  ],
  ["PASCAL", pascal],
  ["LOWER", (v) => v.toLowerCase()],
  ["UPPER", (v) => v.toUpperCase()],
  // golang.org/x/text/cases Title: each word's first letter up, the rest down (`_` and `'` are part of a word).
  ["TITLE", (v) => v.replace(/[\p{L}\p{N}_']+/gu, (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())]
]

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]

export interface RepoNames {
  readonly owner: string
  readonly name: string
  readonly description: string
}

const pathPart = (s: string) => encodeURIComponent(s)

/** The variables and their transformed forms, as Forgejo's `expansionMap`. */
export const expansionsFor = (
  settings: SettingsShape,
  template: RepoNames,
  generated: RepoNames,
  now: Date
): ReadonlyMap<string, string> => {
  const root = settings.server.ROOT_URL
  // Forgejo's Repository.Link(): the sub-path of ROOT_URL, then /owner/name.
  const subPath = new URL(root).pathname.replace(/\/+$/, "")
  const link = (r: RepoNames) => `${subPath}/${pathPart(r.owner)}/${pathPart(r.name)}`
  const https = (r: RepoNames) => `${root}${pathPart(r.owner)}/${pathPart(r.name)}.git`
  const two = (n: number) => String(n).padStart(2, "0")
  const expansions: ReadonlyArray<readonly [string, string, boolean]> = [
    ["YEAR", String(now.getFullYear()), false],
    ["MONTH", two(now.getMonth() + 1), false],
    ["MONTH_ENGLISH", MONTHS[now.getMonth()]!, true],
    ["DAY", two(now.getDate()), false],
    ["REPO_NAME", generated.name, true],
    ["TEMPLATE_NAME", template.name, true],
    ["REPO_DESCRIPTION", generated.description, false],
    ["TEMPLATE_DESCRIPTION", template.description, false],
    ["REPO_OWNER", generated.owner, true],
    ["TEMPLATE_OWNER", template.owner, true],
    ["REPO_LINK", link(generated), false],
    ["TEMPLATE_LINK", link(template), false],
    ["REPO_HTTPS_URL", https(generated), false],
    ["TEMPLATE_HTTPS_URL", https(template), false],
    ["REPO_SSH_URL", sshUrl(settings, generated.owner, generated.name), false],
    ["TEMPLATE_SSH_URL", sshUrl(settings, template.owner, template.name), false]
  ]
  const map = new Map<string, string>()
  for (const [name, value, transformable] of expansions) {
    map.set(name, value)
    if (transformable) for (const [suffix, transform] of TRANSFORMERS) map.set(`${name}_${suffix}`, transform(value))
  }
  return map
}

const SHELL_SPECIAL = "*#$@!?-0123456789"
const isAlphaNum = (c: string) => /^[A-Za-z0-9_]$/.test(c)

/**
 * Go's `os.Expand` over `text`: `$NAME` and `${NAME}` become `lookup(NAME)`; an unknown name
 * becomes the name itself (Forgejo's mapping), so `$$` is a `$`; `${}` and an unclosed `${` are
 * dropped. `text` is handled as bytes (latin1), so content that is not UTF-8 goes through unchanged.
 */
export const osExpand = (text: string, lookup: (name: string) => string): string => {
  let out = ""
  let i = 0
  for (let j = 0; j < text.length; j++) {
    if (text[j] !== "$" || j + 1 >= text.length) continue
    out += text.slice(i, j)
    const rest = text.slice(j + 1)
    let name = ""
    let width = 0
    if (rest[0] === "{") {
      if (rest.length > 2 && SHELL_SPECIAL.includes(rest[1]!) && rest[2] === "}") {
        name = rest[1]!
        width = 3
      } else {
        const close = rest.indexOf("}", 1)
        if (close === -1) width = 1
        else if (close === 1) width = 2
        else {
          name = rest.slice(1, close)
          width = close + 1
        }
      }
    } else if (SHELL_SPECIAL.includes(rest[0]!)) {
      name = rest[0]!
      width = 1
    } else {
      while (width < rest.length && isAlphaNum(rest[width]!)) width++
      name = rest.slice(0, width)
    }
    if (name !== "") out += lookup(name)
    else if (width === 0) out += "$" // not followed by a name: the dollar stays
    j += width
    i = j + 1
  }
  return i === 0 ? text : out + text.slice(i)
}

/** Forgejo's `fileNameSanitize`: what a value may not bring into a file name becomes `_`. */
const sanitizeFileName = (value: string) =>
  value.replace(/\.\.|[<>:"/\\|?*\u0000-\u001F]|^(con|prn|aux|nul|com\d|lpt\d)$/gi, "_").trim()

const latin1 = (utf8: string) => Buffer.from(utf8, "utf8").toString("latin1")

/** A file's bytes with the variables expanded. */
export const expandContent = (content: Uint8Array, map: ReadonlyMap<string, string>): Uint8Array =>
  Buffer.from(
    osExpand(Buffer.from(content).toString("latin1"), (name) => {
      const value = map.get(name)
      return value === undefined ? name : latin1(value)
    }),
    "latin1"
  )

/** A path with the variables expanded, each value made safe for a file name first. */
export const expandPath = (path: string, map: ReadonlyMap<string, string>): string =>
  osExpand(path, (name) => {
    const value = map.get(name)
    return value === undefined ? name : sanitizeFileName(value)
  })

/** The globs of a template file (Forgejo's `GiteaTemplate.Globs`): one a line, `#` comments, bad ones skipped. */
export const templateGlobs = (content: string): Array<RegExp> =>
  content
    .replace(/\r\n?/g, "\n")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .flatMap((line) => {
      const re = compileGlob(line, "/")
      return re === undefined ? [] : [re]
    })

/** Where Forgejo looks for the template file, in order (`checkGiteaTemplate`). */
const TEMPLATE_FILES = [".forgejo/template", ".gitea/template"]

interface NewFile {
  readonly path: string
  readonly mode: Paths.EntryMode
  readonly content: Uint8Array
}

/** The contents of the blobs `shas`, read by one `git cat-file --batch`. */
const blobsOf = (dir: string, shas: ReadonlyArray<string>) =>
  Effect.map(
    Effect.orDie(Git.inRepo(dir, ["cat-file", "--batch"], { input: `${[...new Set(shas)].join("\n")}\n` })),
    ({ stdout }) => {
      const found = new Map<string, Buffer>()
      let at = 0
      while (at < stdout.length) {
        const eol = stdout.indexOf(10, at)
        if (eol < 0) break
        const [sha, type, size] = stdout.subarray(at, eol).toString("latin1").split(" ")
        if (type === "missing" || size === undefined) {
          at = eol + 1
          continue
        }
        found.set(sha!, stdout.subarray(eol + 1, eol + 1 + Number(size)))
        at = eol + 1 + Number(size) + 1
      }
      return found
    }
  )

/**
 * The files of the new repository's first commit: the template's default branch, its template file
 * left out and the files it names expanded (content and path). Submodules are left out, as
 * Forgejo's copy (a clone's working tree) leaves them. 422 when an expanded path is unsafe or two
 * files end at the same path.
 */
const generatedFiles = (dir: string, commit: string, expansions: ReadonlyMap<string, string>) =>
  Effect.gen(function* () {
    const entries = (yield* Effect.orDie(Readers.listTree(dir, commit, true))).filter((e) => e.type === "blob")
    const contents = yield* blobsOf(
      dir,
      entries.map((e) => e.sha)
    )
    const blob = (sha: string) => contents.get(sha) ?? Buffer.alloc(0)
    const templateEntry = TEMPLATE_FILES.flatMap((path) => entries.filter((e) => e.path === path))[0]
    const globs = templateEntry === undefined ? [] : templateGlobs(blob(templateEntry.sha).toString("utf8"))
    const files: Array<NewFile> = []
    const seen = new Set<string>()
    for (const entry of entries) {
      if (entry === templateEntry) continue
      const mode: Paths.EntryMode = entry.mode === "100755" ? "100755" : entry.mode === "120000" ? "120000" : "100644"
      const content = blob(entry.sha)
      // Symbolic links are copied as they are (Forgejo's walk skips no link, but expanding one
      // would rewrite the file it points at).
      const expand = mode !== "120000" && globs.some((re) => re.test(entry.path))
      const path = expand ? expandPath(entry.path, expansions) : entry.path
      const clean = Readers.cleanPath(path)
      const problem = "problem" in clean ? clean.problem : Paths.pathProblem(path, mode)
      if (problem !== undefined || ("path" in clean && clean.path !== path) || path === "") {
        return yield* Errors.validationFailed(
          `the template's file "${entry.path}" expands to a path that cannot be used: "${path}"`
        )
      }
      if (seen.has(path)) {
        return yield* Errors.validationFailed(`two of the template's files expand to the same path: "${path}"`)
      }
      seen.add(path)
      files.push({ path, mode, content: expand ? expandContent(content, expansions) : content })
    }
    return files
  })

// ---------------------------------------------------------------------------------------------

/** POST /repos/{template_owner}/{template_repo}/generate, after the assignment opened the template. */
export const makeGenerate = Effect.gen(function* () {
  const settings = yield* Settings
  const repos = yield* ReposService
  const users = yield* UsersRepo
  const accounts = yield* AccountPolicy
  const orgPolicy = yield* OrgPolicy
  const writer = yield* RepositoryWriter
  const signing = yield* CommitSigner
  const topics = yield* TopicsService
  const issueRows = yield* IssuesRepo
  const hooks = yield* WebhooksRepo
  const protection = yield* ProtectionRepo
  const avatars = yield* AvatarsService

  /** The new repository's owner: the caller, or an account it may create repositories for (Forgejo's `Generate`). */
  const ownerFor = (caller: Principal, name: string) =>
    Effect.gen(function* () {
      if (name === caller.user.name) return caller.user
      const found = yield* users.findByName(name)
      if (Option.isNone(found)) return yield* Errors.notFound()
      const owner = found.value
      yield* accounts.ensureVisible(caller, owner)
      if (caller.user.isAdmin) return owner
      if (owner.type !== "organization") {
        return yield* Errors.forbidden("Only admin can generate repository for other user.")
      }
      if (!(yield* orgPolicy.canCreateOrgRepo(owner, caller.user))) {
        return yield* Errors.forbidden("Given user is not allowed to create repository in organization.")
      }
      return owner
    })

  /** Copies the chosen items other than the git content onto the new repository. */
  const copyItems = (template: RepoRow, made: RepoRow, input: GenerateRepoOption) =>
    Effect.gen(function* () {
      if (input.topics === true && template.topics.length > 0) yield* topics.replace(made.id, template.topics)
      if (input.labels === true) {
        const { rows } = yield* issueRows.listLabels({ repoId: template.id }, "", undefined)
        for (const label of rows) {
          yield* issueRows.insertLabel({
            repo_id: made.id,
            name: label.name,
            color: label.color,
            description: label.description,
            exclusive: label.exclusive
          })
        }
      }
      if (input.webhooks === true) {
        // Forgejo's GenerateWebhooks: the hooks as they are (secrets stay sealed with the same key).
        const { rows } = yield* hooks.list({ kind: "repo", repoId: template.id }, undefined)
        for (const hook of rows) {
          yield* hooks.insert({
            repoId: made.id,
            ownerId: null,
            isSystem: false,
            type: hook.type,
            url: hook.url,
            httpMethod: hook.httpMethod,
            contentType: hook.contentType,
            secret: hook.secret,
            authorizationHeader: hook.authorizationHeader,
            events: hook.events,
            branchFilter: hook.branchFilter,
            meta: hook.meta,
            active: hook.active
          })
        }
      }
      if (input.avatar === true && template.avatar !== "") {
        // Forgejo's GenerateAvatar: the template's picture, stored again for the new repository.
        const picture = yield* avatars.read("repo", template.avatar, AVATAR_SIZE)
        if (Option.isSome(picture)) yield* Effect.orDie(avatars.setRepo(made, picture.value))
      }
      if (input.protected_branch === true) {
        for (const {
          id: _id,
          repoId: _repo,
          ruleName,
          priority: _p,
          createdAt: _c,
          updatedAt: _u,
          ...values
        } of yield* protection.branchRules(template.id)) {
          yield* protection.insertBranchRule(made.id, ruleName, values)
        }
      }
    })

  return (caller: Principal, template: OpenedRepository, input: GenerateRepoOption) =>
    Effect.gen(function* () {
      if (!template.repo.isTemplate) {
        return yield* Errors.validationFailed(
          `${template.owner.name}/${template.repo.name} is not a template repository`
        )
      }
      // Git hooks are an item Hearth has nothing of: chosen, it copies nothing.
      const chosen = [
        input.git_content,
        input.topics,
        input.git_hooks,
        input.webhooks,
        input.avatar,
        input.labels,
        input.protected_branch
      ]
      if (!chosen.some((c) => c === true))
        return yield* Errors.validationFailed("must select at least one template item")
      const owner = yield* ownerFor(caller, input.owner)
      const description = input.description ?? ""
      const defaultBranch =
        input.default_branch !== undefined && input.default_branch.trim() !== ""
          ? input.default_branch
          : template.repo.defaultBranch
      // The files are read and expanded first: an unusable path is refused before anything exists.
      const head =
        input.git_content === true && !template.repo.isEmpty
          ? Option.getOrUndefined(
              yield* Effect.orDie(Readers.resolveCommit(template.path, `refs/heads/${template.repo.defaultBranch}`))
            )
          : undefined
      const files =
        head === undefined
          ? undefined
          : yield* generatedFiles(
              template.path,
              head,
              expansionsFor(
                settings,
                { owner: template.owner.name, name: template.repo.name, description: template.repo.description },
                { owner: owner.name, name: input.name, description },
                new Date()
              )
            )
      const made = yield* repos.create(
        owner,
        { name: input.name, description, private: input.private ?? false, default_branch: defaultBranch },
        caller.user
      )
      const fill = Effect.gen(function* () {
        if (files !== undefined && files.length > 0) {
          // Forgejo's initRepoCommit: "Initial commit" by the new repository's owner.
          const who = Write.signatureAt(gitIdentity(settings, owner), new Date())
          yield* writer
            .commitFiles(
              { id: made.id, dir: repos.pathOf(owner, made) },
              {
                branch: made.defaultBranch,
                files: files.map((f) => ({
                  operation: "create" as const,
                  path: f.path,
                  mode: f.mode,
                  content: f.content
                })),
                message: "Initial commit\n",
                author: who,
                committer: who,
                // Forgejo's SignInitialCommit: the rule is asked about the caller, who made the repository.
                ...signWith(
                  yield* signing.decide("INITIAL_COMMIT", { doer: caller.user, repoPath: repos.pathOf(owner, made) })
                )
              }
            )
            .pipe(Effect.mapError(toApiError))
          yield* repos.recordGitChange(owner, made)
        }
        yield* copyItems(template.repo, made, input)
        return yield* repos.getById(made.id)
      })
      const ready = yield* fill.pipe(Effect.onError(() => repos.remove(owner, made)))
      return { owner, repo: ready }
    })
})
