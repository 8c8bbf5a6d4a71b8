// Which language a file of a repository is written in, from its path only, as Forgejo's
// `GetLanguageStats` asks go-enry: linguist's data (the `linguist-languages` package, loaded on
// first use) by file name, then by extension; files enry calls vendored, dot files, documentation,
// configuration or generated are not counted. Content-based rules (shebangs, heuristics, the
// classifier, `.gitattributes` overrides) are not applied: an extension that several languages
// claim goes to the one listed in AMBIGUOUS below, else to the language whose primary extension it
// is, else to a programming language before markup, data and prose.
import { lazyRequire } from "../lib/LazyRequire.ts"

export interface LinguistLanguage {
  readonly name: string
  readonly type: "programming" | "markup" | "data" | "prose"
  readonly extensions?: ReadonlyArray<string>
  readonly filenames?: ReadonlyArray<string>
  readonly group?: string
  readonly aliases?: ReadonlyArray<string>
}

/** enry's choice (its heuristics or classifier) for the usual content of an ambiguous extension. */
const AMBIGUOUS: Record<string, string> = {
  ".asm": "Assembly",
  ".cfg": "INI",
  ".cs": "C#",
  ".d": "D",
  ".ex": "Elixir",
  ".f": "Fortran",
  ".for": "Fortran",
  ".fs": "F#",
  ".h": "C",
  ".html": "HTML",
  ".inc": "PHP",
  ".json": "JSON",
  ".lisp": "Common Lisp",
  ".m": "Objective-C",
  ".md": "Markdown",
  ".ml": "OCaml",
  ".mm": "Objective-C++",
  ".php": "PHP",
  ".pl": "Perl",
  ".pro": "QMake",
  ".r": "R",
  ".rs": "Rust",
  ".s": "Unix Assembly",
  ".scm": "Scheme",
  ".sol": "Solidity",
  ".sql": "SQL",
  ".t": "Perl",
  ".ts": "TypeScript",
  ".tsx": "TSX",
  ".txt": "Text",
  ".v": "Verilog",
  ".yaml": "YAML",
  ".yml": "YAML"
}

const TYPE_ORDER = { programming: 0, markup: 1, data: 2, prose: 3 } as const

interface Tables {
  readonly byName: Map<string, LinguistLanguage>
  readonly byFilename: Map<string, LinguistLanguage>
  readonly byExtension: Map<string, LinguistLanguage>
}

const loadLinguist = lazyRequire<Record<string, LinguistLanguage>>("linguist-languages")

let tables: Tables | undefined

/** Linguist's tables, built on first use (the package holds ~830 languages). */
const getTables = (): Tables => {
  if (tables !== undefined) return tables
  const languages = Object.entries(loadLinguist())
    .filter(([key, value]) => key !== "default" && typeof value === "object" && value !== null)
    .map(([, value]) => value)
  const byName = new Map(languages.map((l) => [l.name, l]))
  const byFilename = new Map<string, LinguistLanguage>()
  const candidates = new Map<string, Array<LinguistLanguage>>()
  for (const language of languages) {
    for (const filename of language.filenames ?? []) if (!byFilename.has(filename)) byFilename.set(filename, language)
    for (const extension of language.extensions ?? []) {
      const key = extension.toLowerCase()
      candidates.set(key, [...(candidates.get(key) ?? []), language])
    }
  }
  const byExtension = new Map<string, LinguistLanguage>()
  for (const [extension, list] of candidates) {
    const chosen = AMBIGUOUS[extension] === undefined ? undefined : byName.get(AMBIGUOUS[extension])
    const primary = (l: LinguistLanguage) => (l.extensions?.[0]?.toLowerCase() === extension ? 0 : 1)
    const ranked = [...list].sort(
      (a, b) => primary(a) - primary(b) || TYPE_ORDER[a.type] - TYPE_ORDER[b.type] || (a.name < b.name ? -1 : 1)
    )
    byExtension.set(extension, chosen ?? ranked[0]!)
  }
  tables = { byName, byFilename, byExtension }
  return tables
}

// A few of enry's path rules (vendor.yml, documentation.yml, generated.go), the common ones.
const VENDORED =
  /(^|\/)(node_modules|bower_components|vendor|vendors|third[-_]?party|Godeps|deps|\.yarn|jspm_packages|Pods|Carthage\/Build|dist)\//i
const VENDORED_FILES =
  /(^|\/)(jquery[^/]*\.js|bootstrap[^/]*\.(js|css)|gradlew(\.bat)?|mvnw(\.cmd)?|configure|config\.guess|config\.sub)$/i
const DOCUMENTATION =
  /(^|\/)(docs?|Documentation|javadoc|man|examples?|samples?)\/|(^|\/)(CHANGE(S|LOG)?|CONTRIBUTING|COPYING|INSTALL|LICEN[CS]E|README|NOTICE|AUTHORS)(\.[^/]*)?$/i
const GENERATED =
  /(\.min\.(js|css)|\.map|-lock\.json|\.lock|_pb2\.py|\.pb\.go|\.pb\.(cc|h)|\.designer\.cs|\.g\.dart|\.freezed\.dart)$|(^|\/)(go\.sum|package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|Gemfile\.lock|poetry\.lock|composer\.lock)$/i
/** enry's `IsDotFile`: any path component starting with a dot. */
const DOT_FILE = /(^|\/)\.[^/]/
/** enry's `IsConfiguration`: files whose language (by extension) is one of these. */
const CONFIGURATION = new Set(["XML", "JSON", "TOML", "YAML", "INI", "SQL"])

/** Linguist's language for a file name: by the whole name, then by the longest extension it knows (`.d.ts` before `.ts`). */
const lookup = (path: string): { readonly language: LinguistLanguage; readonly byExtension: boolean } | undefined => {
  const { byFilename, byExtension } = getTables()
  const name = path.slice(path.lastIndexOf("/") + 1)
  const language = byFilename.get(name)
  if (language !== undefined) return { language, byExtension: false }
  const lower = name.toLowerCase()
  for (let dot = lower.indexOf("."); dot !== -1; dot = lower.indexOf(".", dot + 1)) {
    const found = byExtension.get(lower.slice(dot))
    if (found !== undefined) return { language: found, byExtension: true }
  }
  return undefined
}

/**
 * The language linguist gives a file from its path alone, with none of enry's exclusions (vendored,
 * documentation, configuration): what a file view highlights it as.
 */
export const linguistLanguage = (path: string): LinguistLanguage | undefined => lookup(path)?.language

export interface Detected {
  /** The language counted (its linguist group when it has one: TSX counts as TypeScript). */
  readonly language: string
  /** Whether enry counts it (programming or markup); data and prose only stand in when nothing else is found. */
  readonly included: boolean
}

/** The language a repository file counts as, or undefined when it is not counted at all. */
export const detect = (path: string): Detected | undefined => {
  if (VENDORED.test(path) || VENDORED_FILES.test(path) || DOT_FILE.test(path) || DOCUMENTATION.test(path)) {
    return undefined
  }
  if (GENERATED.test(path)) return undefined
  const found = lookup(path)
  if (found === undefined || (found.byExtension && CONFIGURATION.has(found.language.name))) return undefined
  const { language } = found
  const { byName } = getTables()
  const counted = language.group === undefined ? language : (byName.get(language.group) ?? language)
  return { language: counted.name, included: counted.type === "programming" || counted.type === "markup" }
}

/**
 * Bytes per language (Forgejo's `GetLanguageStats`): included languages only, or, when there is
 * none, the first excluded language met with its bytes. Keys in byte order, as Go writes a map.
 */
export const languageStats = (
  files: Iterable<{ readonly path: string; readonly size: number }>
): Record<string, number> => {
  const sizes = new Map<string, number>()
  let firstExcluded: { language: string; size: number } | undefined
  for (const file of files) {
    if (file.size === 0) continue
    const found = detect(file.path)
    if (found === undefined) continue
    if (found.included) sizes.set(found.language, (sizes.get(found.language) ?? 0) + file.size)
    else if (sizes.size === 0 && (firstExcluded === undefined || firstExcluded.language === found.language)) {
      firstExcluded = { language: found.language, size: (firstExcluded?.size ?? 0) + file.size }
    }
  }
  if (sizes.size === 0 && firstExcluded !== undefined) sizes.set(firstExcluded.language, firstExcluded.size)
  return Object.fromEntries([...sizes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}
