// Repository templates: the README, .gitignore and LICENSE written by an auto-initialised
// repository, the issue label sets, and the validation of the names a client asks for
// (Forgejo's `CreateUserRepo`, `POST /user/repos`). Pure functions over built-in data; failures are
// `TemplateNotFound`, which `toApiError` turns into the status Forgejo answers with.
//
// Name matching: the readme template must be named exactly, as Forgejo checks it (an unknown
// readme is its documented 400). Gitignore, license and label template names are matched without
// regard to letter case ("node", "mit") and answered with their canonical spelling.
import { Data, Effect, Option } from "effect"
import * as Errors from "../http/Errors.ts"
import { gitignores } from "./Gitignores.ts"
import { type LabelTemplate, labelSets } from "./Labels.ts"
import { fillLicense, type License, licenseKeys, loadLicense } from "./Licenses.ts"

export type { LabelTemplate } from "./Labels.ts"
export type { License } from "./Licenses.ts"

export type TemplateKind = "readme" | "gitignore" | "license" | "label"

export class TemplateNotFound extends Data.TaggedError("TemplateNotFound")<{
  readonly kind: TemplateKind
  readonly name: string
  /** 400 for an unknown readme (Forgejo's), 422 for everything else. */
  readonly status: 400 | 422
  readonly message: string
}> {}

/** The API error for a template that does not exist: 400 or 422 with the same message. */
export const toApiError = (error: TemplateNotFound): Errors.BadRequest | Errors.ValidationFailed =>
  error.status === 400 ? Errors.badRequest(error.message) : Errors.validationFailed(error.message)

// One collator: `localeCompare` with a locale builds one per call (the sorts below took ≈ 15 ms of every start).
const english = new Intl.Collator("en")
const byName = (a: string, b: string) => english.compare(a.toLowerCase(), b.toLowerCase())

// Forgejo's only readme template; its text uses Forgejo's `{Name}` style variables.
const readmes: Readonly<Record<string, string>> = { Default: "# {Name}\n\n{Description}\n" }

export const readmeTemplates: ReadonlyArray<string> = Object.keys(readmes)
export const gitignoreTemplates: ReadonlyArray<string> = Object.keys(gitignores).sort(byName)
export const licenseTemplates: ReadonlyArray<string> = licenseKeys
export const labelTemplates: ReadonlyArray<string> = Object.keys(labelSets).sort(byName)

/** Canonical name for a case-insensitive look-up among `names`. */
const matcher = (names: ReadonlyArray<string>) => {
  const index = new Map(names.map((name) => [name.toLowerCase(), name]))
  return (name: string): Option.Option<string> => Option.fromNullishOr(index.get(name.trim().toLowerCase()))
}
const matchGitignore = matcher(gitignoreTemplates)
const matchLicense = matcher(licenseTemplates)
const matchLabels = matcher(labelTemplates)

export interface GitignoreTemplate {
  readonly name: string
  readonly source: string
}

export const findGitignore = (name: string): Option.Option<GitignoreTemplate> =>
  Option.map(matchGitignore(name), (canonical) => ({ name: canonical, source: gitignores[canonical]! }))

export const findLicense = (name: string): Option.Option<License> => Option.map(matchLicense(name), loadLicense)

export interface LabelSet {
  readonly name: string
  readonly labels: ReadonlyArray<LabelTemplate>
}

export const findLabelTemplate = (name: string): Option.Option<LabelSet> =>
  Option.map(matchLabels(name), (canonical) => ({ name: canonical, labels: labelSets[canonical]! }))

const notFound = (kind: Exclude<TemplateKind, "readme">, name: string, available: ReadonlyArray<string>) =>
  new TemplateNotFound({
    kind,
    name,
    status: 422,
    message: `${kind} template "${name}" does not exist, available templates: ${available.join(", ")}`
  })

/** The readme template's text; "" or absent means "Default". Exact names only. */
export const readmeOf = (name: string | undefined): Effect.Effect<string, TemplateNotFound> => {
  const wanted = name === undefined || name === "" ? "Default" : name
  const text = readmes[wanted]
  return text !== undefined && Object.hasOwn(readmes, wanted)
    ? Effect.succeed(text)
    : Effect.fail(
        new TemplateNotFound({
          kind: "readme",
          name: wanted,
          status: 400,
          // Forgejo's wording, with Go's `%v` rendering of the list ("[Default]").
          message: `readme template does not exist, available templates: [${readmeTemplates.join(" ")}]`
        })
      )
}

/** The gitignore templates named in a comma-separated list (empty entries skipped, duplicates once). */
export const gitignoresOf = (list: string): Effect.Effect<ReadonlyArray<GitignoreTemplate>, TemplateNotFound> =>
  Effect.suspend(() => {
    const found: Array<GitignoreTemplate> = []
    for (const raw of list.split(",")) {
      const name = raw.trim()
      if (name === "") continue
      const template = findGitignore(name)
      if (Option.isNone(template)) return Effect.fail(notFound("gitignore", name, gitignoreTemplates))
      if (!found.some((t) => t.name === template.value.name)) found.push(template.value)
    }
    return Effect.succeed(found)
  })

export const licenseOf = (name: string): Effect.Effect<License, TemplateNotFound> =>
  Option.match(findLicense(name), {
    onNone: () => Effect.fail(notFound("license", name.trim(), licenseTemplates)),
    onSome: Effect.succeed
  })

/** The labels of a label set (`issue_labels` of a new repository). */
export const labelsOf = (name: string): Effect.Effect<ReadonlyArray<LabelTemplate>, TemplateNotFound> =>
  Option.match(findLabelTemplate(name), {
    onNone: () => Effect.fail(notFound("label", name.trim(), labelTemplates)),
    onSome: (set) => Effect.succeed(set.labels)
  })

export interface CreateTemplateOptions {
  readonly autoInit?: boolean | undefined
  readonly readme?: string | undefined
  readonly gitignores?: string | undefined
  readonly license?: string | undefined
  readonly issueLabels?: string | undefined
}

/**
 * Checks the template names of a repository-creation request before anything is created, in
 * Forgejo's order: readme, gitignores and license only matter when auto-initialising; a label set
 * is applied (and so checked) either way. Empty strings mean "none".
 */
export const checkCreateOptions = (options: CreateTemplateOptions): Effect.Effect<void, TemplateNotFound> =>
  Effect.gen(function* () {
    if (options.autoInit === true) {
      yield* readmeOf(options.readme)
      if (options.gitignores !== undefined) yield* gitignoresOf(options.gitignores)
      if (options.license !== undefined && options.license.trim() !== "") yield* licenseOf(options.license)
    }
    if (options.issueLabels !== undefined && options.issueLabels.trim() !== "") yield* labelsOf(options.issueLabels)
  })

export interface InitialFileOptions {
  readonly repoName: string
  readonly description: string
  /** The owner's name, used in the README variables and as the license's copyright holder. */
  readonly owner: string
  /** HTTPS clone URL (`{CloneURL.HTTPS}` in readme templates). */
  readonly cloneUrl: string
  /** SSH clone URL (`{CloneURL.SSH}`); the HTTPS one when absent. */
  readonly sshCloneUrl?: string | undefined
  readonly readme?: string | undefined
  readonly gitignores?: string | undefined
  readonly license?: string | undefined
  /** The year written into the license, e.g. `new Date().getUTCFullYear()`. */
  readonly year: number
}

export interface InitialFile {
  readonly path: string
  readonly content: string
}

/** Forgejo's readme variables; unknown `{...}` sequences are left as they are. */
const expandReadme = (template: string, options: InitialFileOptions) => {
  const values: Readonly<Record<string, string>> = {
    Name: options.repoName,
    Description: options.description,
    OwnerName: options.owner,
    "CloneURL.HTTPS": options.cloneUrl,
    "CloneURL.SSH": options.sshCloneUrl ?? options.cloneUrl
  }
  return template.replace(/\{([A-Za-z.]+)\}/g, (whole, key: string) =>
    Object.hasOwn(values, key) ? values[key]! : whole
  )
}

/**
 * The files of an auto-initialised repository: README.md always, .gitignore when `gitignores`
 * names templates (each under a "# ---> Name" header, as Forgejo writes them), LICENSE when
 * `license` is given, with the year, owner and repository name filled in.
 */
export const renderInitialFiles = (options: InitialFileOptions): Effect.Effect<Array<InitialFile>, TemplateNotFound> =>
  Effect.gen(function* () {
    const files: Array<InitialFile> = []
    const readme = yield* readmeOf(options.readme)
    files.push({ path: "README.md", content: expandReadme(readme, options) })

    const ignores = options.gitignores === undefined ? [] : yield* gitignoresOf(options.gitignores)
    if (ignores.length > 0) {
      const sections = ignores.map(
        ({ name, source }) => `# ---> ${name}\n${source.endsWith("\n") ? source : `${source}\n`}`
      )
      files.push({ path: ".gitignore", content: sections.join("\n") })
    }

    if (options.license !== undefined && options.license.trim() !== "") {
      const license = yield* licenseOf(options.license)
      files.push({
        path: "LICENSE",
        content: fillLicense(license, { year: options.year, owner: options.owner, repoName: options.repoName })
      })
    }
    return files
  })
