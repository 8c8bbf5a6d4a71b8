// The application's services on top of the configured database.
import { Layer } from "effect"
import type { Settings } from "./config/Settings.ts"
import * as Database from "./db/Database.ts"
import { Authenticator } from "./http/Authentication.ts"
import { TokensRepo } from "./tokens/Repo.ts"
import { TokensService } from "./tokens/Service.ts"
import { TwoFactor } from "./twofa/Service.ts"
import { AccountPolicy } from "./users/Policy.ts"
import { UsersRepo } from "./users/Repo.ts"
import { UsersService } from "./users/Service.ts"

const Repos = Layer.mergeAll(UsersRepo.layer, TokensRepo.layer, TwoFactor.layer, AccountPolicy.layer)

export const Services = Layer.mergeAll(UsersService.layer, TokensService.layer).pipe(
  Layer.provideMerge(Authenticator.layer),
  Layer.provideMerge(Repos)
)

/** Everything the HTTP server and the CLI need, given `Settings`. */
export const AppLayer = Services.pipe(Layer.provideMerge(Database.layer))

export type AppRequirements = Settings
