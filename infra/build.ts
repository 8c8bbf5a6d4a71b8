// `npm run build`: the production bundle, dist/hearth.mjs, which `hearth serve` (bin/hearth.js)
// runs instead of the sources while it is newer than them. Node then loads one module for Hearth and
// effect instead of ~870 (each resolved, read, compiled and kept as source text in V8's heap):
// start-up CPU about halved and ≈ 40 MB less resident memory (infra/bench/README.md, "Issue 16:
// the bundle (session 28)").
//
// Bundled: Hearth's sources, effect and @effect/* (and the bundler's own helpers). Left in node_modules, loaded from there as the
// sources load them: every other package (native bindings, WebAssembly and data files found next to
// their own modules, the heavy ones loaded on first use). What a source imports lazily
// (`import("./X.ts")`) becomes a chunk (dist/chunks/), so it stays lazy.
//
//   node infra/build.ts [--out-dir DIR]    (default dist; DIR must be inside the package)
import { rmSync } from "node:fs"
import { isAbsolute, relative, resolve } from "node:path"
import { parseArgs } from "node:util"
import { rolldown } from "rolldown"

const root = resolve(import.meta.dirname, "..")
const { values } = parseArgs({ options: { "out-dir": { type: "string", default: "dist" } } })
const outDir = resolve(root, values["out-dir"])
// Outside the package the bundle would not find node_modules nor Hearth's files (src/lib/PackageRoot.ts).
if (relative(root, outDir).startsWith("..") || outDir === root) throw new Error(`--out-dir must be inside ${root}`)

const bundled = /^(effect|@effect\/[^/]+|@oxc-project\/runtime)(\/|$)/
const isPackage = (id: string) => !id.startsWith(".") && !isAbsolute(id) && !id.startsWith("\0")

// Node's built-in modules as `process.getBuiltinModule(…)`, not `import … from "node:…"`. An ES import of a built-in
// makes Node build its ES module facade, which reads every export, the lazy ones too: `node:http`'s
// WebSocket/EventSource load undici (Node's fetch, with node:http2, node:worker_threads…), `node:fs`'s ReadStream
// its streams, `node:fs/promises` readline: `node:http` alone 34–39 ms against 4.5 ms (infra/bench/README.md,
// "Start-up and the tests' processes — session 40"). The statement keeps its line, so the source map stays right.
const BUILTIN_IMPORT = /^import (?:\{([^}]*)\}|\* as ([\w$]+)|([\w$]+)) from "(node:[\w/]+)";$/gm
const builtinsWithoutFacade = {
  name: "builtins-without-facade",
  renderChunk: (code: string) =>
    code.replace(
      BUILTIN_IMPORT,
      (_all, named: string | undefined, namespace: string | undefined, whole: string | undefined, id: string) => {
        const binding =
          named === undefined ? (namespace ?? whole) : `{${named.replace(/\b([\w$]+) as ([\w$]+)/g, "$1: $2")}}`
        return `const ${binding} = process.getBuiltinModule("${id}");`
      }
    )
}

const started = performance.now()
const build = await rolldown({
  input: { hearth: resolve(root, "src/cli.ts") },
  cwd: root,
  platform: "node",
  external: (id) => id.startsWith("node:") || (isPackage(id) && !bundled.test(id)),
  plugins: [builtinsWithoutFacade],
  logLevel: "warn"
})
rmSync(outDir, { recursive: true, force: true })
const { output } = await build.write({
  dir: outDir,
  format: "esm",
  entryFileNames: "[name].mjs",
  chunkFileNames: "chunks/[name]-[hash].mjs",
  // Without documentation comments: effect's modules carry their whole documentation, which V8 would keep in
  // memory as part of every module's source text.
  comments: { legal: true, annotation: false, jsdoc: false },
  sourcemap: true
})
await build.close()
const size = output.reduce((n, o) => n + (o.type === "chunk" ? o.code.length : 0), 0)
console.log(
  `built ${relative(root, outDir)}/hearth.mjs and ${output.filter((o) => o.type === "chunk").length - 1} chunks ` +
    `(${(size / 1e6).toFixed(1)} MB of code) in ${Math.round(performance.now() - started)} ms`
)
