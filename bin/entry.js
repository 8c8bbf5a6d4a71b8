// Which code `hearth` runs: the bundle (dist/hearth.mjs) when it exists and was built after every
// change to what it is built from — the sources (src/), package.json and the installed packages
// (npm writes node_modules/.package-lock.json at every install) — else the sources. So a checkout
// never built, or changed since the last build (a `git pull`, an edit, an upgrade), runs what is on
// disk, and a forgotten `npm run build` costs start-up time, never stale code. Plain JavaScript:
// it runs before Node could load TypeScript from the compile cache. Checking costs ≈ 1 ms per
// hundred files under src/ (a stat each).
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const mtime = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0)

/** The newest modification time of the files under `dir`. */
const newest = (dir) => {
  let time = 0
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) time = Math.max(time, statSync(join(entry.parentPath, entry.name)).mtimeMs)
  }
  return time
}

/**
 * `{ entry, stale }`: the module to import, and whether a bundle exists that is out of date.
 * @param {string} root the package's root directory
 * @returns {{ entry: string, stale: boolean }}
 */
export const chooseEntry = (root = dirname(dirname(fileURLToPath(import.meta.url)))) => {
  const sources = join(root, "src", "cli.ts")
  const bundle = join(root, "dist", "hearth.mjs")
  if (!existsSync(bundle)) return { entry: sources, stale: false }
  const inputs = Math.max(
    newest(join(root, "src")),
    mtime(join(root, "package.json")),
    mtime(join(root, "node_modules", ".package-lock.json"))
  )
  return inputs < mtime(bundle) ? { entry: bundle, stale: false } : { entry: sources, stale: true }
}
