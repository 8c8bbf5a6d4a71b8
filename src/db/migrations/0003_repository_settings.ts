// Repository settings changed by PATCH /repos/{o}/{r} (mirror interval, prune, unit switches), and
// indexes for GET /repos/search (one query per page over many repositories).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE repositories
    ADD COLUMN mirror_interval text NOT NULL DEFAULT '',
    ADD COLUMN enable_prune boolean NOT NULL DEFAULT true,
    ADD COLUMN has_issues boolean NOT NULL DEFAULT true,
    ADD COLUMN has_wiki boolean NOT NULL DEFAULT true,
    ADD COLUMN has_pull_requests boolean NOT NULL DEFAULT true,
    ADD COLUMN has_projects boolean NOT NULL DEFAULT true,
    ADD COLUMN has_releases boolean NOT NULL DEFAULT true,
    ADD COLUMN has_packages boolean NOT NULL DEFAULT true,
    ADD COLUMN has_actions boolean NOT NULL DEFAULT false`
  // Search sorts: the default (name), the public listing by id, and the other sort keys.
  yield* sql`CREATE INDEX repositories_public_name ON repositories (lower_name, id) WHERE NOT is_private`
  yield* sql`CREATE INDEX repositories_created ON repositories (created_at, id)`
  yield* sql`CREATE INDEX repositories_updated ON repositories (updated_at, id)`
  yield* sql`CREATE INDEX repositories_owner ON repositories (owner_id, id)`
})
