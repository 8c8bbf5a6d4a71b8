// The one place that knows where Hearth's package lies on disk. Hearth runs either from its sources
// (src/…, one module per file) or from the production bundle (dist/hearth.mjs and its chunks, made
// by `npm run build`), so no module may find a file relative to its own location
// (`import.meta.url`): the files it reads (package.json, src/web/static, the embedded database's
// initdb script) and the packages it loads on demand (node_modules) are found from the package's
// root instead, the nearest directory above this module holding Hearth's package.json.
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const PACKAGE_NAME = "hearth-forge"

const findRoot = (from: string): string => {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, "package.json")
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, "utf8")).name === PACKAGE_NAME) return dir
    if (dirname(dir) === dir) throw new Error(`Hearth's package.json (${PACKAGE_NAME}) not found above ${from}`)
  }
}

/** The package's root directory (where package.json, src/ and node_modules/ are). */
export const PACKAGE_ROOT: string = findRoot(dirname(fileURLToPath(import.meta.url)))

/** A path inside the package: `packagePath("src", "web", "static", "copy.js")`. */
export const packagePath = (...segments: ReadonlyArray<string>): string => join(PACKAGE_ROOT, ...segments)

/** package.json, read once. */
export const PACKAGE_JSON: { readonly version: string } = JSON.parse(readFileSync(packagePath("package.json"), "utf8"))

/**
 * `require` resolving from the package's root: Hearth's own dependencies in node_modules (loaded
 * on first use, see LazyRequire.ts, or read as files: stylesheets, grammars, license texts).
 */
export const packageRequire: NodeJS.Require = createRequire(packagePath("package.json"))
