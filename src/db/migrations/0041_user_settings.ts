// Issue 23 item 3: what `/user/settings` (Forgejo's UserSettings) keeps beside the profile: the web
// theme and diff view a person chose, and whether their activity and pronouns are private.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE users
    ADD COLUMN theme text NOT NULL DEFAULT '',
    ADD COLUMN diff_view_style text NOT NULL DEFAULT '',
    ADD COLUMN keep_activity_private boolean NOT NULL DEFAULT false,
    ADD COLUMN keep_pronouns_private boolean NOT NULL DEFAULT false,
    ADD COLUMN enable_repo_unit_hints boolean NOT NULL DEFAULT true`
})
