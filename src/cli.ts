// The `hearth` command's entry point (`npm start`, `npx hearth`).
import { enableCompileCache } from "node:module"

// `serve` keeps V8's young generation small. V8 sizes it from the machine's memory (up to 64 MB
// per semi-space on a large host), which becomes most of a server's resident memory and buys
// nothing for requests that allocate a few kilobytes each; 8 MB semi-spaces measured the same
// requests/s at 70–100 MB less RSS (infra/bench/README.md). V8 reads the flag only at start-up, so
// `serve` replaces its own process (process.execve: same pid, no child) with one started with it,
// unless the flag was given already (on the command line or in NODE_OPTIONS).
const YOUNG_GENERATION = "--max-semi-space-size=8"
const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].some((arg) => arg.includes("--max-semi-space-size"))
if (process.argv.slice(2).includes("serve") && !given && typeof process.execve === "function") {
  process.execve(process.execPath, [process.execPath, YOUNG_GENERATION, ...process.execArgv, ...process.argv.slice(1)])
}

// Node's compile cache keeps the type-stripped and compiled modules between runs (in the OS temp
// dir, or NODE_COMPILE_CACHE), which takes about a third off start-up. It is switched on before
// the rest of the program is loaded.
enableCompileCache?.()
await import("./Commands.ts")
