// Topic rules (Forgejo's models/repo/topic.go): names are trimmed and lower-cased, at most 35
// characters of `^[a-z0-9][-.a-z0-9]*$`, at most 25 per repository.
import { Context, Effect, Layer } from "effect"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { type Listed, type TopicRow, TopicsRepo } from "./Repo.ts"

/** Forgejo's `MaxTopicsPerRepo`. */
export const MAX_TOPICS_PER_REPO = 25
const TOPIC_PATTERN = /^[a-z0-9][-.a-z0-9]*$/

/** Forgejo's `ValidateTopic` (its length in bytes, as Go's `len`). */
export const validTopic = (name: string) => Buffer.byteLength(name) <= 35 && TOPIC_PATTERN.test(name)

/** Go's `strings.TrimSpace(strings.ToLower(name))`. */
export const sanitizeTopic = (name: string) => name.toLowerCase().trim()

/** Forgejo's `SanitizeAndValidateTopics`: distinct valid names in order, and the invalid ones; blanks dropped. */
export const sanitizeAndValidate = (names: ReadonlyArray<string>) => {
  const valid: Array<string> = []
  const invalid: Array<string> = []
  for (const raw of names) {
    const name = sanitizeTopic(raw)
    if (name === "" || valid.includes(name)) continue
    if (validTopic(name)) valid.push(name)
    else invalid.push(name)
  }
  return { valid, invalid }
}

const invalidName = (name: string) => Errors.invalidTopics("Topic name is invalid", name)

export class TopicsService extends Context.Service<
  TopicsService,
  {
    readonly listForRepo: (repoId: number, window: Page | undefined) => Effect.Effect<Listed<string>>
    readonly search: (keyword: string, window: Page | undefined) => Effect.Effect<Listed<TopicRow>>
    /** Forgejo's `UpdateTopics`: replaces the repository's topics. */
    readonly replace: (repoId: number, names: ReadonlyArray<string>) => Effect.Effect<void, Errors.ValidationFailed>
    /** Forgejo's `AddTopic`. */
    readonly add: (repoId: number, name: string) => Effect.Effect<void, Errors.ValidationFailed>
    /** Forgejo's `DeleteTopic`: false when the repository did not have it. */
    readonly remove: (repoId: number, name: string) => Effect.Effect<boolean, Errors.ValidationFailed>
  }
>()("hearth/topics/TopicsService") {
  static readonly layer = Layer.effect(
    TopicsService,
    Effect.gen(function* () {
      const repo = yield* TopicsRepo
      return TopicsService.of({
        listForRepo: (repoId, window) => repo.listForRepo(repoId, window),
        search: (keyword, window) => repo.search(keyword, window),
        replace: (repoId, names) =>
          Effect.gen(function* () {
            const { valid, invalid } = sanitizeAndValidate(names)
            if (valid.length > MAX_TOPICS_PER_REPO) {
              return yield* Errors.invalidTopics("Exceeding maximum number of topics per repo", null)
            }
            if (invalid.length > 0) {
              return yield* Errors.invalidTopics("Topic names are invalid", invalid)
            }
            yield* repo.replace(repoId, valid)
          }),
        add: (repoId, raw) =>
          Effect.gen(function* () {
            const name = sanitizeTopic(raw)
            if (!validTopic(name)) return yield* invalidName(name)
            if ((yield* repo.countForRepo(repoId)) >= MAX_TOPICS_PER_REPO) {
              return yield* Errors.validationFailed("Exceeding maximum allowed topics per repo.")
            }
            yield* repo.add(repoId, name)
          }),
        remove: (repoId, raw) =>
          Effect.gen(function* () {
            const name = sanitizeTopic(raw)
            if (!validTopic(name)) return yield* invalidName(name)
            return yield* repo.remove(repoId, name)
          })
      })
    })
  )
}
