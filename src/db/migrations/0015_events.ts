// The one durable, ordered delivery queue (src/jobs/Queue.ts), grown out of federation's: the
// outbound deliveries of 0010 become the `federation` topic of `delivery_queue`, and the event
// hub's durable consumers (src/events) queue their work beside them under their own topics.
// `federation_queue` stays as a view of the federation topic, for whoever reads it.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE federation_queue RENAME TO delivery_queue`
  yield* sql`ALTER TABLE delivery_queue RENAME COLUMN message TO payload`
  yield* sql`ALTER TABLE delivery_queue ADD COLUMN topic text NOT NULL DEFAULT 'federation'`
  yield* sql`ALTER TABLE delivery_queue ALTER COLUMN topic DROP DEFAULT`
  yield* sql`DROP INDEX federation_queue_due`
  yield* sql`DROP INDEX federation_queue_ordering`
  yield* sql`CREATE INDEX delivery_queue_due ON delivery_queue (topic, deliver_at)`
  yield* sql`CREATE INDEX delivery_queue_ordering ON delivery_queue (topic, ordering_key, id)`
  yield* sql`CREATE VIEW federation_queue AS
    SELECT id, payload AS message, ordering_key, job_key, deliver_at, attempts, locked_until
    FROM delivery_queue WHERE topic = 'federation'`
})
