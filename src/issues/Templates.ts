// Issue templates and the issue config of a repository's default branch (Forgejo's
// services/issue/template.go, modules/issue/template; CONTRACT-ISSUES §15). Templates are the
// `.md` files (YAML front matter, then the body) and `.yaml`/`.yml` issue forms of each template
// directory, in Forgejo's order; the same file in several directories counts each time. A file
// that does not parse or validate is skipped. The config (`config.yaml`/`.yml` of the first
// `.forgejo`, `.gitea` or `.github` template directory that has one) gives `blank_issues_enabled`
// and `contact_links`; `/issue_config/validate` says what is wrong with it. Where Forgejo answers
// `null` for no templates, Hearth answers `[]`, and an absent `ref` stays "" (Forgejo: `refs/heads/`).
import { Context, Effect, Layer, Option } from "effect"
import type * as Yaml from "yaml"
import { ContentsService } from "../contents/Service.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import type { OpenedRepository } from "../repos/Policy.ts"

// yaml is 72 modules: loaded when a repository's templates are first read, not at start-up.
const loadYaml = lazyRequire<typeof Yaml>("yaml")
const parseYaml = (text: string): unknown => loadYaml().parse(text)

/** The directories Forgejo reads templates from, in its order. */
export const TEMPLATE_DIRS = [
  "ISSUE_TEMPLATE",
  "issue_template",
  ".forgejo/ISSUE_TEMPLATE",
  ".forgejo/issue_template",
  ".gitea/ISSUE_TEMPLATE",
  ".gitea/issue_template",
  ".github/ISSUE_TEMPLATE",
  ".github/issue_template",
  ".gitlab/ISSUE_TEMPLATE",
  ".gitlab/issue_template",
  "docs/ISSUE_TEMPLATE",
  "docs/issue_template"
] as const

/** Where the issue config may be (`.yaml` first, then `.yml`), in Forgejo's order. */
export const CONFIG_PATHS = [
  ".forgejo/ISSUE_TEMPLATE/config",
  ".forgejo/issue_template/config",
  ".gitea/ISSUE_TEMPLATE/config",
  ".gitea/issue_template/config",
  ".github/ISSUE_TEMPLATE/config",
  ".github/issue_template/config"
] as const

export interface IssueFormField {
  readonly type: string
  readonly id: string
  readonly attributes: Record<string, unknown>
  readonly validations: Record<string, unknown>
  readonly visible: ReadonlyArray<string>
}

export interface IssueTemplate {
  readonly name: string
  readonly title: string
  readonly about: string
  readonly labels: ReadonlyArray<string>
  /** Forgejo's `assignees` (logins): preselected on the new issue's form; not part of the API's template. */
  readonly assignees: ReadonlyArray<string>
  readonly ref: string
  readonly content: string
  readonly body: ReadonlyArray<IssueFormField>
  readonly file_name: string
}

export interface IssueConfig {
  readonly blank_issues_enabled: boolean
  readonly contact_links: ReadonlyArray<{ readonly name: string; readonly url: string; readonly about: string }>
}

const defaultConfig = (): IssueConfig => ({ blank_issues_enabled: true, contact_links: [] })

class TemplateError extends Error {}
const fail = (message: string): never => {
  throw new TemplateError(message)
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const str = (v: unknown, key: string): string => {
  if (v === undefined || v === null) return ""
  if (typeof v === "string") return v
  if (typeof v === "number" || typeof v === "boolean") return String(v)
  return fail(`'${key}' should be a string`)
}

/** Forgejo's IssueTemplateStringSlice: a list, or one comma-separated string. */
const labelsOf = (v: unknown, key = "labels"): Array<string> => {
  if (v === undefined || v === null) return []
  if (typeof v === "string") {
    return v
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
  }
  if (Array.isArray(v)) return v.map((s) => str(s, key).trim()).filter((s) => s !== "")
  return fail(`'${key}' should be a list or a comma-separated string`)
}

const FIELD_TYPES = ["markdown", "textarea", "input", "dropdown", "checkboxes"] as const
const ID = /^[a-zA-Z0-9_-]+$/

/** Forgejo's template.Validate for the fields of an issue form. */
const fieldsOf = (raw: unknown): Array<IssueFormField> => {
  if (!Array.isArray(raw) || raw.length === 0) return fail("'body' is required")
  const ids = new Set<string>()
  return raw.map((item, idx): IssueFormField => {
    if (!isRecord(item)) return fail(`body[${idx}]: should be a map`)
    const type = str(item.type, "type")
    const at = `body[${idx}](${type})`
    if (!(FIELD_TYPES as ReadonlyArray<string>).includes(type)) return fail(`${at}: unknown type`)
    const id = str(item.id, "id")
    if (id !== "") {
      if (!ID.test(id)) fail(`${at}: 'id' should contain only alphanumeric, '-' and '_'`)
      if (ids.has(id)) fail(`${at}: 'id' should be unique`)
      ids.add(id)
    }
    const attributes = item.attributes === undefined || item.attributes === null ? {} : item.attributes
    if (!isRecord(attributes)) return fail(`${at}: 'attributes' should be a map`)
    const validations = item.validations === undefined || item.validations === null ? {} : item.validations
    if (!isRecord(validations)) return fail(`${at}: 'validations' should be a map`)
    if (type === "markdown") {
      if (typeof attributes.value !== "string" || attributes.value === "") fail(`${at}: 'value' is required`)
    } else {
      if (typeof attributes.label !== "string" || attributes.label === "") fail(`${at}: 'label' is required`)
      if (id === "") fail(`${at}: 'id' is required`)
    }
    if (type === "dropdown" || type === "checkboxes") {
      const options = attributes.options
      if (!Array.isArray(options) || options.length === 0) fail(`${at}: 'options' is required and should be a list`)
      ;(options as Array<unknown>).forEach((option, n) => {
        if (type === "dropdown" && typeof option !== "string") fail(`${at}: 'options[${n}]' should be a string`)
        if (type === "checkboxes" && !(isRecord(option) && typeof option.label === "string" && option.label !== "")) {
          fail(`${at}: 'label' of 'options[${n}]' is required`)
        }
      })
    }
    const visible = item.visible === undefined || item.visible === null ? [] : item.visible
    if (!Array.isArray(visible) || !visible.every((v) => v === "form" || v === "content")) {
      fail(`${at}: 'visible' should be a list of 'form' and 'content'`)
    }
    return {
      type,
      id,
      attributes,
      validations,
      visible:
        (visible as Array<string>).length > 0
          ? (visible as Array<string>)
          : type === "markdown"
            ? ["form"]
            : ["form", "content"]
    }
  })
}

/** A markdown template's YAML front matter and the text after it. */
const frontMatter = (text: string): { readonly meta: unknown; readonly content: string } => {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  if (lines[0]?.trim() !== "---") return fail("no valid front matter")
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---")
  if (end < 0) return fail("no valid front matter")
  return { meta: parseYaml(lines.slice(1, end).join("\n")), content: lines.slice(end + 1).join("\n") }
}

/** One template file, or the reason it is not one (Forgejo's template.Unmarshal and Validate). */
export const parseTemplate = (fileName: string, text: string): IssueTemplate | { readonly error: string } => {
  try {
    const markdown = fileName.toLowerCase().endsWith(".md")
    const { meta, content } = markdown ? frontMatter(text) : { meta: parseYaml(text) as unknown, content: "" }
    if (!isRecord(meta)) return fail("the template should be a map")
    const name = str(meta.name, "name").trim()
    // GitHub's forms say `description`; Forgejo takes it for `about`.
    const about = str(meta.about, "about").trim() || str(meta.description, "description").trim()
    if (name === "") fail("'name' is required")
    if (about === "") fail("'about' is required")
    const rawRef = str(meta.ref, "ref")
    return {
      name,
      title: str(meta.title, "title"),
      about,
      labels: labelsOf(meta.labels),
      assignees: labelsOf(meta.assignees, "assignees"),
      ref: rawRef === "" || rawRef.startsWith("refs/") ? rawRef : `refs/heads/${rawRef}`,
      content,
      body: markdown ? [] : fieldsOf(meta.body),
      file_name: fileName
    }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}

/** The issue config in a file, or what is wrong with it (Forgejo's GetTemplateConfig). */
export const parseConfig = (text: string): { readonly config: IssueConfig; readonly error?: string } => {
  try {
    const raw: unknown = parseYaml(text)
    if (raw === null || raw === undefined) return { config: defaultConfig() }
    if (!isRecord(raw)) return fail("the config should be a map")
    const blank = raw.blank_issues_enabled
    if (blank !== undefined && blank !== null && typeof blank !== "boolean") {
      fail("'blank_issues_enabled' should be true or false")
    }
    const links = raw.contact_links ?? []
    if (!Array.isArray(links)) return fail("'contact_links' should be a list")
    const contact_links = links.map((link, i) => {
      const pos = i + 1
      if (!isRecord(link)) return fail(`contact_link at position ${pos} should be a map`)
      const name = str(link.name, "name")
      const url = str(link.url, "url")
      const about = str(link.about, "about")
      if (name === "") fail(`contact_link at position ${pos} is missing name key`)
      if (url === "") fail(`contact_link at position ${pos} is missing url key`)
      if (about === "") fail(`contact_link at position ${pos} is missing about key`)
      if (!isRequestUri(url)) fail(`${url} is not a valid URL`)
      return { name, url, about }
    })
    return { config: { blank_issues_enabled: blank !== false, contact_links } }
  } catch (e) {
    return { config: defaultConfig(), error: e instanceof Error ? e.message : String(e) }
  }
}

/** Go's url.ParseRequestURI: an absolute URL, or an absolute path. */
const isRequestUri = (url: string) => {
  if (url.startsWith("/")) return !/\s/.test(url)
  try {
    return new URL(url).protocol !== ""
  } catch {
    return false
  }
}

export class IssueTemplates extends Context.Service<
  IssueTemplates,
  {
    readonly templates: (opened: OpenedRepository) => Effect.Effect<ReadonlyArray<IssueTemplate>>
    /** The config in effect, and the error of the file when it is invalid (then the default applies). */
    readonly config: (
      opened: OpenedRepository
    ) => Effect.Effect<{ readonly config: IssueConfig; readonly error?: string }>
  }
>()("hearth/issues/IssueTemplates") {
  static readonly layer = Layer.effect(
    IssueTemplates,
    Effect.gen(function* () {
      const contents = yield* ContentsService
      const ignore = <A>(effect: Effect.Effect<A, unknown>, fallback: A) =>
        Effect.catch(effect, () => Effect.succeed(fallback))

      /** The default branch's root tree, none for an empty repository. */
      const rootOf = (opened: OpenedRepository) =>
        Effect.gen(function* () {
          if (opened.repo.isEmpty) return undefined
          const handle = contents.handle(opened)
          const commit = yield* contents.commitOf(handle, `refs/heads/${opened.repo.defaultBranch}`)
          return Option.isNone(commit) ? undefined : { handle, tree: commit.value.tree }
        })
      const blobText = (handle: ReturnType<typeof contents.handle>, sha: string) =>
        Effect.map(contents.blob(handle, sha), (b) => b.bytes.toString("utf8"))

      return IssueTemplates.of({
        templates: (opened) =>
          Effect.gen(function* () {
            const root = yield* rootOf(opened)
            if (root === undefined) return []
            const out: Array<IssueTemplate> = []
            for (const dir of TEMPLATE_DIRS) {
              const entry = yield* contents.entryAt(root.handle, root.tree, dir)
              if (Option.isNone(entry) || entry.value.type !== "tree") continue
              const listed = yield* ignore(
                contents.tree(root.handle, entry.value.sha, { recursive: false, page: 1, perPage: 1000 }),
                undefined
              )
              for (const file of listed?.entries ?? []) {
                const name = file.path.split("/").pop() ?? file.path
                if (file.type !== "blob" || !/\.(md|ya?ml)$/i.test(name)) continue
                const text = yield* ignore(blobText(root.handle, file.sha), undefined)
                if (text === undefined) continue
                const parsed = parseTemplate(name, text)
                if (!("error" in parsed)) out.push(parsed)
              }
            }
            return out
          }),
        config: (opened) =>
          Effect.gen(function* () {
            const root = yield* rootOf(opened)
            if (root === undefined) return { config: defaultConfig() }
            for (const base of CONFIG_PATHS) {
              for (const ext of [".yaml", ".yml"]) {
                const entry = yield* contents.entryAt(root.handle, root.tree, `${base}${ext}`)
                if (Option.isNone(entry) || entry.value.type !== "blob") continue
                const text = yield* ignore(blobText(root.handle, entry.value.sha), undefined)
                return text === undefined ? { config: defaultConfig() } : parseConfig(text)
              }
            }
            return { config: defaultConfig() }
          })
      })
    })
  )
}
