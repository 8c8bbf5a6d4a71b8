// Web sessions (src/sessions): a browser's sign-in, kept in the database so that it survives a
// restart and can be ended from anywhere (sign-out, a password change). The cookie holds a random
// id; only its SHA-256 is stored, so a copy of the table signs no one in. `stage` is 'two-factor'
// between a correct password and the passcode of an account with TOTP: such a session signs no one
// in yet. `password_stamp` is a digest of the password hash the session was opened with: a
// session whose account's password changed since (web, API, CLI alike) is no longer valid.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE web_sessions (
    id_hash text PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    stage text NOT NULL DEFAULT 'signed-in' CHECK (stage IN ('signed-in', 'two-factor')),
    password_stamp text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX web_sessions_user ON web_sessions (user_id)`
  yield* sql`CREATE INDEX web_sessions_expires ON web_sessions (expires_at)`
})
