// The `hearth` command's entry point (`npm start`, `npx hearth`).
import { enableCompileCache } from "node:module"

// `serve` starts V8 with these settings, read only at start-up:
// - A small young generation. V8 sizes it from the machine's memory (up to 64 MB per semi-space on
//   a large host), which becomes most of a server's resident memory and buys little for requests
//   that allocate a few kilobytes each: 16 MB semi-spaces measured ≈ 90 MB less RSS under load
//   (infra/bench/README.md); 8 MB saves 15 MB more but costs CPU in scavenges.
// - No allocation-site pretenuring. While the modules load and the layers are built nearly every
//   object survives, so V8 marks some object and array literals of effect's request path as
//   long-lived and from then on allocates them in the old generation, where each keeps the
//   request it belongs to alive through every scavenge until the next full collection. Measured
//   on `GET /api/v1/version` (embedded): 1.8 MB promoted per scavenge, 2.2 ms pauses and a full
//   collection a second, against none, 0.2 ms and none without it; 32,000 → 51,000 requests/s
//   and 35 → 19 µs of CPU per request (infra/bench/README.md, runs H and I).
// - WebAssembly compiled by Liftoff only, V8's baseline compiler: the embedded database
//   (PGlite) is 9 MB of WASM, and V8's optimizing compiler, which it tiers the hottest functions
//   up to, needs ≈ 600 MB for one of them (PostgreSQL's SQL parser, `raw_parser`: 105 KB of WASM,
//   5 s of CPU to optimize), in the first seconds after start. The embedded server's peak went
//   from 766–827 MB to 219–244 MB and its idle RSS from 265 to 217 MB (the compiler's freed
//   memory stays in the C heap); the optimized code made a query ≈ 10 % cheaper (300 against
//   330 µs of CPU for a primary-key SELECT; most of a query is PGlite's JavaScript) and the
//   benchmark's requests, which Hearth answers from its caches, do not change. On PostgreSQL
//   Hearth runs no WebAssembly of its own (Node's fetch parses HTTP responses with some).
//   `node --no-liftoff-only src/cli.ts serve` gives the optimizing compiler back.
// So `serve` replaces its own process (process.execve: same pid, no child) with one started with
// them, unless they were given already (on the command line or in NODE_OPTIONS).
const SERVER_FLAGS = ["--max-semi-space-size=16", "--no-allocation-site-pretenuring", "--liftoff-only"]

// Node's compile cache keeps the type-stripped and compiled modules between runs (in the OS temp
// dir, or NODE_COMPILE_CACHE), which takes about a third off start-up and, once warm, spares the
// server Node's TypeScript stripper (~18 MB). It is switched on before the rest is loaded, and
// given to the re-executed server from its first module on.
const cache = enableCompileCache?.()

const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ")
// A setting given either way (`--allocation-site-pretenuring` too) is left as given.
const missing = SERVER_FLAGS.filter((flag) => !given.includes(flag.replace(/^--(no-)?/, "").split("=")[0]!))
if (process.argv.slice(2).includes("serve") && missing.length > 0 && typeof process.execve === "function") {
  const env = cache?.directory === undefined ? process.env : { ...process.env, NODE_COMPILE_CACHE: cache.directory }
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], env)
}

await import("./Commands.ts")
