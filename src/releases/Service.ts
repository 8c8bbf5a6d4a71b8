// Release rules (Forgejo's services/release/release.go, routers/api/v1/repo/release*.go;
// CONTRACT-WEBHOOKS §3): drafts are seen by writers only and never latest; publishing creates the
// release's git tag from its target when the tag is missing (tag protection applies); deleting a
// release keeps its tag. Where Forgejo answers 500 (a protected tag or bad target on edit, an
// invalid tag name), Hearth answers the 4xx that create gives.
import { Context, Effect, Layer, Option } from "effect"
import * as Reader from "../branches/Service.ts"
import { created, pushed, type ReleaseAction, subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { RepositoryWriter, toApiError } from "../git/Repository.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { branchNameProblem } from "../lib/Names.ts"
import { ProtectionService } from "../protection/Service.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import type { CreateReleaseOption, EditReleaseOption } from "./Api.ts"
import { type ReleaseFilter, type ReleaseRow, ReleasesRepo } from "./Repo.ts"

/** Forgejo cuts a title to 255 bytes (`util.EllipsisDisplayString` is not used: a plain cut). */
const TITLE_MAX_BYTES = 255
const cutTitle = (title: string) => {
  const bytes = Buffer.from(title)
  if (bytes.length <= TITLE_MAX_BYTES) return title
  // Cut on a character boundary.
  let end = TITLE_MAX_BYTES
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString()
}

/** Whether the caller may change releases here, and so see drafts (Forgejo's `CanWrite(unit.TypeReleases)`). */
export const canWriteReleases = (opened: OpenedRepository) =>
  opened.caller !== undefined && atLeast(opened.access.mode, "write")

/** The outcome of a create or an edit, for the release event (step 3): `published` when it made the tag. */
export interface Saved {
  readonly release: ReleaseRow
  readonly action: "published" | "updated" | undefined
}

type Writer = Principal

export class ReleasesService extends Context.Service<
  ReleasesService,
  {
    readonly list: (
      opened: OpenedRepository,
      filter: Omit<ReleaseFilter, "withDrafts">,
      window: Page
    ) => Effect.Effect<{ readonly rows: Array<ReleaseRow>; readonly total: number }>
    /** A release the caller may see, or 404. */
    readonly get: (opened: OpenedRepository, id: string) => Effect.Effect<ReleaseRow, Errors.NotFound>
    readonly byTag: (opened: OpenedRepository, tag: string) => Effect.Effect<ReleaseRow, Errors.NotFound>
    readonly latest: (opened: OpenedRepository) => Effect.Effect<ReleaseRow, Errors.NotFound>
    readonly create: (
      opened: OpenedRepository,
      caller: Writer,
      options: CreateReleaseOption
    ) => Effect.Effect<Saved, Errors.ApiError>
    readonly edit: (
      opened: OpenedRepository,
      caller: Writer,
      id: string,
      options: EditReleaseOption
    ) => Effect.Effect<Saved, Errors.ApiError>
    /** Deletes the release (its assets with it) and keeps its git tag; the deleted row. */
    readonly remove: (
      opened: OpenedRepository,
      caller: Writer,
      release: ReleaseRow
    ) => Effect.Effect<ReleaseRow, Errors.NotFound>
    /** Whether a release (a draft too) uses the tag: the tag cannot be deleted then (Forgejo's DeleteTag: 409). */
    readonly tagInUse: (repoId: number, tag: string) => Effect.Effect<boolean>
  }
>()("hearth/releases/ReleasesService") {
  static readonly layer = Layer.effect(
    ReleasesService,
    Effect.gen(function* () {
      const releases = yield* ReleasesRepo
      const writer = yield* RepositoryWriter
      const protection = yield* ProtectionService
      const events = yield* EventHub

      const visible = (opened: OpenedRepository, found: Option.Option<ReleaseRow>) =>
        Option.isSome(found) && (!found.value.isDraft || canWriteReleases(opened))
          ? Effect.succeed(found.value)
          : Effect.fail(Errors.notFound())

      const parseId = (id: string) => (/^\d{1,15}$/.test(id) ? Number(id) : undefined)

      const get = (opened: OpenedRepository, id: string) => {
        const n = parseId(id)
        if (n === undefined) return Effect.fail(Errors.notFound())
        return Effect.flatMap(releases.byId(opened.repo.id, n), (found) => visible(opened, found))
      }

      /** The commit the existing tag points at, if the tag exists in git. */
      const tagCommit = (path: string, tag: string) =>
        branchNameProblem(tag) === undefined
          ? Reader.resolveCommit(path, `refs/tags/${tag}`)
          : Effect.succeed(Option.none<string>())

      /** A tag name git can make: checked for drafts too, whose tag is made only when published. */
      const checkTagName = (tag: string) => {
        const problem = branchNameProblem(tag)
        return problem === undefined
          ? Effect.void
          : Effect.fail(Errors.validationFailed(`[TagName]: invalid tag name "${tag.slice(0, 100)}": ${problem}`))
      }

      /**
       * Forgejo's `createTag`: the commit of the release's tag, creating a lightweight tag at
       * `target` when the tag is missing (`made`: it was created now).
       */
      const ensureTag = (opened: OpenedRepository, caller: Writer, tag: string, target: string) =>
        Effect.gen(function* () {
          const existing = yield* tagCommit(opened.path, tag)
          if (Option.isSome(existing)) return { sha: existing.value, made: false }
          const problem = branchNameProblem(tag)
          if (problem !== undefined)
            return yield* Errors.validationFailed(`[TagName]: invalid tag name "${tag.slice(0, 100)}": ${problem}`)
          if (!(yield* protection.mayControlTag(opened, caller.user, tag)))
            return yield* Errors.validationFailed(`release tag name is protected [tag_name: ${tag}]`)
          const commit = yield* Reader.resolveCommit(opened.path, target)
          if (Option.isNone(commit)) return yield* Errors.notFound()
          yield* writer
            .updateRefs({ id: opened.repo.id, dir: opened.path }, [
              { ref: `refs/tags/${tag}`, newSha: commit.value, oldSha: Git.ZERO_SHA }
            ])
            .pipe(Effect.catch((e) => Effect.fail(toApiError(e))))
          yield* events.publish(
            pushed(opened.owner, opened.repo, caller.user, "api", [created(`refs/tags/${tag}`, commit.value)])
          )
          return { sha: commit.value, made: true }
        })

      const repoIsEmpty = (path: string) => Effect.orDie(Git.isEmpty(path))

      /** The release event (Forgejo's `sendReleaseHook`; never for a draft), with the release as it is now. */
      const announce = (opened: OpenedRepository, caller: Writer, action: ReleaseAction, release: ReleaseRow) =>
        events.publish({
          _tag: "Release",
          ...subject(opened.owner, opened.repo, caller.user),
          action,
          release: {
            id: release.id,
            tagName: release.tagName,
            target: release.target,
            title: release.title,
            note: release.note,
            isDraft: release.isDraft,
            isPrerelease: release.isPrerelease,
            hideArchiveLinks: release.hideArchiveLinks,
            publisherId: release.publisherId,
            createdAt: release.createdAt.toISOString()
          }
        })

      return ReleasesService.of({
        list: (opened, filter, window) =>
          releases.list(opened.repo.id, { ...filter, withDrafts: canWriteReleases(opened) }, window),
        get,
        byTag: (opened, tag) => Effect.flatMap(releases.byTag(opened.repo.id, tag), (found) => visible(opened, found)),
        latest: (opened) =>
          Effect.flatMap(releases.latest(opened.repo.id), (found) =>
            Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound())
          ),
        create: (opened, caller, options) =>
          Effect.gen(function* () {
            // Leading dashes are cut, as Forgejo does, so that a tag never reads as an option.
            const tag = (options.tag_name ?? "").replace(/^-+/, "")
            if (tag === "") return yield* Errors.validationFailed("[TagName]: Required")
            yield* checkTagName(tag)
            if (yield* repoIsEmpty(opened.path)) return yield* Errors.validationFailed("repo is empty")
            if (yield* releases.tagInUse(opened.repo.id, tag)) return yield* Errors.conflict("Release has no Tag")
            const target =
              options.target_commitish === undefined ||
              options.target_commitish === null ||
              options.target_commitish === ""
                ? opened.repo.defaultBranch
                : options.target_commitish
            const isDraft = options.draft ?? false
            const sha = isDraft ? null : (yield* ensureTag(opened, caller, tag, target)).sha
            const title =
              options.name === undefined || options.name === null || options.name === "" ? tag : options.name
            const inserted = yield* releases.insert(opened.repo.id, {
              tagName: tag,
              target,
              title: cutTitle(title),
              note: options.body ?? "",
              sha1: sha,
              isDraft,
              isPrerelease: options.prerelease ?? false,
              hideArchiveLinks: options.hide_archive_links ?? false,
              publisherId: caller.user.id,
              touch: false
            })
            // Another request made a release of this tag meanwhile.
            if (Option.isNone(inserted)) return yield* Errors.conflict("Release has no Tag")
            if (!isDraft) yield* announce(opened, caller, "published", inserted.value)
            return { release: inserted.value, action: isDraft ? undefined : "published" } satisfies Saved
          }),
        edit: (opened, caller, id, options) =>
          Effect.gen(function* () {
            const release = yield* get(opened, id)
            const nonEmpty = (value: string | null | undefined, current: string) =>
              value === undefined || value === null || value === "" ? current : value
            // Forgejo applies strings only when non-empty and booleans only when given.
            const tag = nonEmpty(options.tag_name?.replace(/^-+/, ""), release.tagName)
            if (tag !== release.tagName) yield* checkTagName(tag)
            const target = nonEmpty(options.target_commitish, release.target)
            const isDraft = options.draft ?? release.isDraft
            if (tag.toLowerCase() !== release.tagName.toLowerCase() && (yield* releases.tagInUse(opened.repo.id, tag)))
              return yield* Errors.conflict(`a release of the tag "${tag}" exists already`)
            let sha = tag === release.tagName ? release.sha1 : null
            let made = false
            if (!isDraft) {
              const ensured = yield* ensureTag(opened, caller, tag, target === "" ? opened.repo.defaultBranch : target)
              sha = ensured.sha
              made = ensured.made
            }
            const updated = yield* releases.update(opened.repo.id, release.id, {
              tagName: tag,
              target,
              title: cutTitle(nonEmpty(options.name, release.title)),
              note: nonEmpty(options.body, release.note),
              sha1: sha,
              isDraft,
              isPrerelease: options.prerelease ?? release.isPrerelease,
              hideArchiveLinks: options.hide_archive_links ?? release.hideArchiveLinks,
              // Forgejo keeps the publisher on edit.
              publisherId: release.publisherId,
              // A draft's creation time follows its every change; publishing resets it.
              touch: isDraft || made
            })
            if (Option.isNone(updated)) return yield* Errors.conflict(`a release of the tag "${tag}" exists already`)
            // Forgejo: `published` when this edit made the tag, else `updated`; nothing for a draft.
            const action: Saved["action"] = isDraft ? undefined : made ? "published" : "updated"
            if (action !== undefined) yield* announce(opened, caller, action, updated.value)
            return { release: updated.value, action } satisfies Saved
          }),
        remove: (opened, caller, release) =>
          Effect.gen(function* () {
            if (!(yield* releases.remove(opened.repo.id, release.id))) return yield* Errors.notFound()
            if (!release.isDraft) yield* announce(opened, caller, "deleted", release)
            return release
          }),
        tagInUse: releases.tagInUse
      })
    })
  )
}
