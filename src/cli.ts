// The `hearth` command's entry point (`npm start`, `npx hearth`).
import { enableCompileCache } from "node:module"

// `serve` starts V8 with these settings, read only at start-up:
// - A small young generation. V8 sizes it from the machine's memory (up to 64 MB per semi-space on
//   a large host), which becomes most of a server's resident memory and buys little for requests
//   that allocate a few kilobytes each: 16 MB semi-spaces measured ≈ 90 MB less RSS under load
//   than the default, 8 MB another 16–25 MB less (PostgreSQL: 170 against 195 MB after 135,000
//   requests) for twice as many scavenges, each half as long now that nothing is pretenured
//   (below): +0.6 µs of scavenging per request, ≈ 1 % of the CPU (infra/bench/README.md, issue 16
//   item 6).
// - No allocation-site pretenuring. While the modules load and the layers are built nearly every
//   object survives, so V8 marks some object and array literals of effect's request path as
//   long-lived and from then on allocates them in the old generation, where each keeps the
//   request it belongs to alive through every scavenge until the next full collection. Measured
//   on `GET /api/v1/version` (embedded): 1.8 MB promoted per scavenge, 2.2 ms pauses and a full
//   collection a second, against none, 0.2 ms and none without it; 32,000 → 51,000 requests/s
//   and 35 → 19 µs of CPU per request (infra/bench/README.md, runs H and I).
// - WebAssembly compiled by Liftoff only, V8's baseline compiler. The embedded database (PGlite)
//   is 9 MB of WASM; V8 tiers its hottest functions up to its optimizing compiler, which needs
//   ≈ 600 MB for one of them (PostgreSQL's SQL parser, `raw_parser`: 105 KB of WASM, seconds of
//   CPU), in the first seconds after every start. With it the embedded server peaked at 768–799
//   MB (220–232 MB without) and idled at 267 MB (217 MB without: what the compiler frees stays in
//   the C heap). Without it a query costs more CPU: ≈ 10 % for a primary-key SELECT on PGlite
//   alone, 8–18 % for a request that reads the database (`users/search`); `npm run bench`'s
//   requests, answered from Hearth's caches, do not change (infra/bench/README.md, "The embedded
//   database's memory"). The embedded database is for small installs on small machines, where
//   the peak decides whether the server runs at all. On PostgreSQL Hearth runs no WebAssembly of
//   its own (Node's fetch parses HTTP responses with some). `node --no-liftoff-only src/cli.ts
//   serve` brings the optimizing compiler back.
// So `serve` replaces its own process (process.execve: same pid, no child) with one started with
// them, unless they were given already (on the command line or in NODE_OPTIONS).
const SERVER_FLAGS = ["--max-semi-space-size=8", "--no-allocation-site-pretenuring", "--liftoff-only"]
// The other commands (`admin user …`, `migrate`) open the same database for a few queries and
// end: the optimizing compiler only costs them, ≈ 0.5 s of CPU and a peak of 700–760 MB against
// ≈ 300 MB (`hearth admin user list`, embedded), beside a server on the same small machine. They
// get Liftoff only too; the heap settings are for a long-running process. (A flag set at run time,
// v8.setFlagsFromString, comes too late: V8 has fixed its WebAssembly settings by then.)
const COMMAND_FLAGS = ["--liftoff-only"]

// Node's compile cache keeps the type-stripped and compiled modules between runs (in the OS temp
// dir, or NODE_COMPILE_CACHE), which takes about a third off start-up and, once warm, spares the
// server Node's TypeScript stripper (~18 MB). It is switched on before the rest is loaded, and
// given to the re-executed server from its first module on.
const cache = enableCompileCache?.()

const given = [...process.execArgv, process.env.NODE_OPTIONS ?? ""].join(" ")
// A setting given either way (`--allocation-site-pretenuring` too) is left as given.
const args = process.argv.slice(2)
// Help opens no database: it is printed by this process, not one started again.
const flags = args.includes("serve") ? SERVER_FLAGS : args.includes("--help") ? [] : COMMAND_FLAGS
const missing = flags.filter((flag) => !given.includes(flag.replace(/^--(no-)?/, "").split("=")[0]!))
if (missing.length > 0 && typeof process.execve === "function") {
  const env = cache?.directory === undefined ? process.env : { ...process.env, NODE_COMPILE_CACHE: cache.directory }
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], env)
}

await import("./Commands.ts")
