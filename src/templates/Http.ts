// Handlers of the template endpoints: lists and look-ups over the built-in templates.
import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import {
  findGitignore,
  findLabelTemplate,
  findLicense,
  gitignoreTemplates,
  labelTemplates,
  licenseTemplates
} from "./Service.ts"

// A how-to hint, as GitHub's license API and Forgejo's both carry one (our own wording).
const IMPLEMENTATION =
  "Create a text file named LICENSE (or LICENSE.txt) at the root of your source code " +
  "and copy the license text into it, filling in the year and the copyright holder."

const orNotFound = <A>(found: Option.Option<A>) =>
  Option.match(found, { onNone: () => Effect.fail(Errors.notFound()), onSome: Effect.succeed })

export const TemplatesHttp = apiGroup(HearthApi, "templates", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    // Forgejo names each license by its key and points at this server's own copy.
    const entry = (key: string) => ({
      key,
      name: key,
      url: `${settings.server.ROOT_URL}api/v1/licenses/${encodeURIComponent(key)}`
    })
    const licenseList = licenseTemplates.map(entry)

    return handlers
      .handle("listGitignoresTemplates", () => Effect.succeed(gitignoreTemplates))
      .handle("getGitignoreTemplateInfo", ({ params }) => orNotFound(findGitignore(params.name)))
      .handle("listLicenseTemplates", () => Effect.succeed(licenseList))
      .handle("getLicenseTemplateInfo", ({ params }) =>
        Effect.map(orNotFound(findLicense(params.name)), (license) => ({
          ...entry(license.key),
          implementation: IMPLEMENTATION,
          body: license.text
        }))
      )
      .handle("listLabelTemplates", () => Effect.succeed(labelTemplates))
      .handle("getLabelTemplateInfo", ({ params }) =>
        Effect.map(orNotFound(findLabelTemplate(params.name)), (set) => set.labels)
      )
  })
)
