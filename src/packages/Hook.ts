// The `package` webhook's payload (Forgejo's services/webhook/notifier.go `packageNotify`,
// modules/structs/hook.go `PackagePayload`): the Package as the doer saw it when the version was
// created or deleted; `repository` and `organization` are always null, as in Forgejo (the linked
// repository shows only inside `package`). Built from the event alone, with no database read.
import { Effect } from "effect"
import type * as Events from "../events/Events.ts"

export const packagePayload = (event: Extract<Events.Event, { _tag: "Package" }>): Effect.Effect<object> =>
  Effect.succeed({
    action: event.action,
    repository: null,
    package: event.package,
    organization: null,
    sender: event.sender
  })
