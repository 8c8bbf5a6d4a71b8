// The `hearth` command's entry point (`npm start`, `npx hearth`).
import { enableCompileCache } from "node:module"

// `serve` keeps V8's young generation small. V8 sizes it from the machine's memory (up to 64 MB
// per semi-space on a large host), which becomes most of a server's resident memory and buys
// little for requests that allocate a few kilobytes each: 16 MB semi-spaces measured ≈ 90 MB less
// RSS under load (infra/bench/README.md); 8 MB saves 15 MB more but costs CPU in scavenges.
// V8 reads the flag only at start-up, so `serve` replaces its own process (process.execve: same
// pid, no child) with one started with it, unless the flag was given already (on the command line
// or in NODE_OPTIONS).
const YOUNG_GENERATION = "--max-semi-space-size=16"

// Node's compile cache keeps the type-stripped and compiled modules between runs (in the OS temp
// dir, or NODE_COMPILE_CACHE), which takes about a third off start-up and, once warm, spares the
// server Node's TypeScript stripper (~18 MB). It is switched on before the rest is loaded, and
// given to the re-executed server from its first module on.
const cache = enableCompileCache?.()

const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((arg) => arg.includes("--max-semi-space-size"))
if (process.argv.slice(2).includes("serve") && !given && typeof process.execve === "function") {
  const env = cache?.directory === undefined ? process.env : { ...process.env, NODE_COMPILE_CACHE: cache.directory }
  process.execve(process.execPath, [process.execPath, YOUNG_GENERATION, ...process.execArgv, ...process.argv.slice(1)], env)
}

await import("./Commands.ts")
