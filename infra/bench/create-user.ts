// Creates the benchmark's account through the users service, for when `hearth admin user
// create` is not available. Settings come from the environment (HEARTH__…, DATABASE_URL), as
// for `hearth serve`.   node infra/bench/create-user.ts USERNAME PASSWORD EMAIL
import { Effect, Layer } from "effect"
import { AppLayer } from "../../src/App.ts"
import * as Settings from "../../src/config/Settings.ts"
import { UsersService } from "../../src/users/Service.ts"

const [username, password, email] = process.argv.slice(2)
if (username === undefined || password === undefined || email === undefined) {
  console.error("usage: node infra/bench/create-user.ts USERNAME PASSWORD EMAIL")
  process.exit(2)
}

const program = Effect.gen(function* () {
  const users = yield* UsersService
  yield* users.create({ username, password, email })
}).pipe(Effect.provide(AppLayer.pipe(Layer.provide(Settings.layer()))))

try {
  await Effect.runPromise(program)
  // The embedded database may keep handles open; the data dir lock is already released here.
  process.exit(0)
} catch (error) {
  console.error(error)
  process.exit(1)
}
