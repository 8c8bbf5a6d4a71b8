// `npm run bench:floor`: how much of the per-request targets' gap is the framework's. Three servers
// answer the benchmark's two requests (`GET /api/v1/version`; `GET /api/v1/users/bench` with a
// token) side by side in every round, the order reversed every other round:
//   - the ceiling (ceiling.ts): bare node:http writing the bytes Hearth answered;
//   - the floor (floor-server.ts): Effect's HttpApi on @effect/platform-node with the same two routes,
//     a token looked up in a Map and Hearth's own User schema, and nothing else of Hearth;
//   - Hearth (`hearth serve`, as `npm run bench` starts it).
// The table gives each one's requests/s and the ratios floor/ceiling (what the framework leaves),
// Hearth/ceiling (issue 16's targets) and Hearth/floor (what Hearth's own code costs).
// Settings: BENCH_BACKEND (embedded | postgres; default embedded: Hearth's rates are the same on
// both), BENCH_DURATION, BENCH_ROUNDS, BENCH_WARMUP, BENCH_CONNECTIONS, BENCH_PIN as `npm run bench`;
// BENCH_SERVERS (`label=dir[:flags]`, as `npm run bench`): several checkouts of Hearth side by side,
// each measured in every round against the same ceiling and floor (default: this one).
import { randomBytes } from "node:crypto"
import os from "node:os"
import { join } from "node:path"
import {
  type Backend,
  createAccount,
  createToken,
  fmt,
  http,
  load,
  log,
  machineLine,
  median,
  parseServers,
  pct,
  positive,
  preparePostgres,
  root,
  runMain,
  type Sample,
  spawnListening,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  backend: process.env.BENCH_BACKEND === "postgres" ? ("postgres" as const) : ("embedded" as const),
  duration: positive("BENCH_DURATION", 10),
  warmup: positive("BENCH_WARMUP", 3),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  connections: positive("BENCH_CONNECTIONS", 4),
  hearths:
    process.env.BENCH_SERVERS === undefined || process.env.BENCH_SERVERS === ""
      ? undefined
      : parseServers(process.env.BENCH_SERVERS)
}
const ACCOUNT = { username: "bench", password: "bench-password-123" }
/** "ceiling", "floor", then each Hearth by its label ("hearth" when there is one). */
type Who = string

const main = async () => {
  const load0 = os.loadavg()
  const tmp = tempDir("hearth-bench-floor-")
  const hearths: Array<{ label: string; base: string; token: string; child: Parameters<typeof stopChild>[0] }> = []
  for (const server of config.hearths ?? [{ label: "hearth", tree: root, nodeArgs: [], env: {} }]) {
    const backend: Backend = {
      name: config.backend,
      dataDir: join(tmp, `data-${server.label}`),
      logFile: join(tmp, `hearth-${server.label}.log`),
      ...(config.hearths === undefined ? {} : { tree: server.tree, nodeArgs: server.nodeArgs, env: server.env }),
      ...(config.backend === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {})
    }
    log(`${config.backend}: creating the account (${server.label})`)
    await createAccount(backend, ACCOUNT)
    const running = await startHearth(backend)
    const token = await createToken(running.base, ACCOUNT, ["read:user"])
    hearths.push({ label: server.label, base: running.base, token, child: running.child })
  }
  const hearth = hearths[0]!
  const SERVERS: ReadonlyArray<Who> = ["ceiling", "floor", ...hearths.map((h) => h.label)]
  const floorToken = randomBytes(20).toString("hex")
  const floor = await spawnListening(
    [join(root, "infra/bench/floor-server.ts")],
    { ...process.env, FLOOR_TOKEN: floorToken },
    "the floor server"
  )
  const cases = [
    { name: "version", path: "/api/v1/version", headers: (_: Who) => ({}) },
    {
      name: "user (token)",
      path: `/api/v1/users/${ACCOUNT.username}`,
      headers: (who: Who): Record<string, string> => ({
        authorization: `token ${who === "floor" ? floorToken : (hearths.find((h) => h.label === who)?.token ?? hearth.token)}`
      })
    }
  ]
  // The ceiling answers the (first) Hearth's bytes (the floor's differ only by Hearth's extra headers).
  const responses: Record<string, unknown> = {}
  for (const c of cases) {
    const res = await http(`${hearth.base}${c.path}`, { headers: c.headers(hearth.label) })
    if (res.status !== 200) throw new Error(`${c.path} answered ${res.status}`)
    const headers = { ...res.headers }
    for (const name of ["date", "connection", "keep-alive", "transfer-encoding", "content-length"]) delete headers[name]
    responses[c.path] = { status: res.status, headers, body: res.body.toString("base64") }
    const own = await http(`${floor.base}${c.path}`, { headers: c.headers("floor") })
    if (own.status !== 200) throw new Error(`the floor: ${c.path} answered ${own.status}`)
  }
  const ceiling = await spawnListening(
    [join(root, "infra/bench/ceiling.ts")],
    { ...process.env, CEILING_RESPONSES: JSON.stringify(responses) },
    "the ceiling server"
  )
  const bases: Record<Who, string> = { ceiling: ceiling.base, floor: floor.base }
  for (const h of hearths) bases[h.label] = h.base

  const samples = new Map<string, Array<Record<Who, Sample>>>()
  for (let round = 1; round <= config.rounds; round++) {
    for (const c of cases) {
      const order = round % 2 === 0 ? [...SERVERS].reverse() : [...SERVERS]
      const got = {} as Record<Who, Sample>
      for (const who of order) {
        const url = `${bases[who]}${c.path}`
        if (round === 1) await load(url, c.headers(who), config.warmup, config.connections)
        got[who] = await load(url, c.headers(who), config.duration, config.connections)
        if (got[who].bad > 0) throw new Error(`${who} ${c.path}: ${got[who].bad} failed requests`)
        log(`round ${round} ${c.name} ${who}: ${fmt(got[who].rps)} req/s`)
      }
      samples.set(c.name, [...(samples.get(c.name) ?? []), got])
    }
  }
  for (const child of [...hearths.map((h) => h.child), floor.child, ceiling.child]) await stopChild(child)

  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; Hearth on ${config.backend}; autocannon, ${config.connections} connections, ${config.duration} s per server and case, ${config.rounds} rounds (medians; ratios are medians of the per-round ratios)`,
    "",
    "| request | Hearth | ceiling req/s | floor req/s | Hearth req/s | floor ÷ ceiling | Hearth ÷ ceiling | Hearth ÷ floor |",
    "|---|---|---:|---:|---:|---:|---:|---:|"
  ]
  for (const c of cases) {
    const rounds = samples.get(c.name)!
    const rps = (who: Who) => median(rounds.map((r) => r[who]!.rps))
    const ratio = (a: Who, b: Who) => {
      const each = rounds.map((r) => r[a]!.rps / r[b]!.rps)
      return `**${pct(median(each))}** (${each.map(pct).join(", ")})`
    }
    for (const h of hearths) {
      lines.push(
        `| GET ${c.path} ${c.name === "version" ? "" : "(token)"} | ${h.label} | ${fmt(rps("ceiling"))} | ${fmt(rps("floor"))} | ${fmt(rps(h.label))} | ${ratio("floor", "ceiling")} | ${ratio(h.label, "ceiling")} | ${ratio(h.label, "floor")} |`
      )
    }
  }
  process.stdout.write(`\n${lines.join("\n")}\n`)
  return 0
}

await runMain(main)
