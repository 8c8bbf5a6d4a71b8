// Does recording activity feeds slow a push down? (`node infra/bench/feeds.ts`; issue 23 item 4)
// Two checkouts side by side (BENCH_TREES="before=/path/to/checkout,after=."), each serving its own
// fresh PostgreSQL database: one small push (one new commit on main, over smart HTTP) to each in
// turn, alternating which goes first, BENCH_FEEDS_ROUNDS times; the medians and their ratio. A
// push's commits are read for the feed in a fiber of its own, so the ratio should stay near 1.
// Progress on stderr, the table on stdout; only what it started is stopped.
import { writeFileSync } from "node:fs"
import os from "node:os"
import { join, resolve } from "node:path"
import {
  type Account,
  type Backend,
  createAccount,
  createToken,
  execFileP,
  fmt,
  http,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  type Running,
  root,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const ROUNDS = Math.max(1, Math.round(positive("BENCH_FEEDS_ROUNDS", 40)))
const TREES = (process.env.BENCH_TREES ?? "this=.").split(",").map((entry) => {
  const [label, dir] = entry.split("=") as [string, string | undefined]
  return { label, dir: resolve(root, dir ?? ".") }
})
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }

const main = async () => {
  const tmp = tempDir("hearth-bench-feeds-")
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: tmp,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    LANG: "C",
    GIT_AUTHOR_NAME: "B",
    GIT_AUTHOR_EMAIL: "b@example.com",
    GIT_COMMITTER_NAME: "B",
    GIT_COMMITTER_EMAIL: "b@example.com"
  }
  const git = (args: ReadonlyArray<string>, cwd?: string) =>
    execFileP("git", args as Array<string>, { cwd, env, timeout: 120_000 })
  const load0 = os.loadavg()

  const servers: Array<{ label: string; hearth: Running; clone: string; token: string; seconds: Array<number> }> = []
  for (const tree of TREES) {
    const pg = await preparePostgres()
    const backend: Backend = {
      name: "postgres",
      dataDir: join(tmp, `${tree.label}-data`),
      databaseUrl: pg.url,
      logFile: join(tmp, `${tree.label}.log`),
      tree: tree.dir
    }
    await createAccount(backend, ACCOUNT)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base, ACCOUNT, ["write:repository", "write:user"])
    const res = await http(`${hearth.base}/api/v1/user/repos`, {
      method: "POST",
      headers: { authorization: `token ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "pushed", auto_init: true })
    })
    if (res.status !== 201) throw new Error(`creating the repository failed: ${res.status}`)
    const url = new URL(`${hearth.base}/${ACCOUNT.username}/pushed.git`)
    url.username = ACCOUNT.username
    url.password = token
    const clone = join(tmp, `${tree.label}-clone`)
    await git(["clone", "-q", url.toString(), clone])
    servers.push({ label: tree.label, hearth, clone, token, seconds: [] })
    log(`${tree.label}: ${tree.dir} serving at ${hearth.base}`)
  }

  const pushOnce = async (server: (typeof servers)[number], round: number) => {
    writeFileSync(join(server.clone, "file.txt"), `round ${round}\n`)
    await git(["add", "file.txt"], server.clone)
    await git(["commit", "-q", "-m", `round ${round}`], server.clone)
    const started = performance.now()
    await git(["push", "-q", "origin", "HEAD:main"], server.clone)
    server.seconds.push((performance.now() - started) / 1000)
  }
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? servers : [...servers].reverse()
    for (const server of order) await pushOnce(server, round)
  }

  const out: Array<string> = []
  out.push(`Feeds bench: ${ROUNDS} pushes of one commit to each server, alternating`)
  out.push(machineLine(load0))
  out.push("")
  out.push("| server | median push (ms) | min | max | feed actions recorded |")
  out.push("|---|---|---|---|---|")
  for (const server of servers) {
    const feed = await http(`${server.hearth.base}/api/v1/repos/${ACCOUNT.username}/pushed/activities/feeds?limit=1`, {
      headers: { authorization: `token ${server.token}` }
    })
    const recorded = feed.status === 200 ? (feed.headers["x-total-count"] ?? "?") : "(no feeds)"
    out.push(
      `| ${server.label} | ${fmt(median(server.seconds) * 1000, 1)} | ${fmt(Math.min(...server.seconds) * 1000, 1)} | ${fmt(Math.max(...server.seconds) * 1000, 1)} | ${recorded} |`
    )
  }
  if (servers.length === 2)
    out.push(
      "",
      `Ratio ${servers[1]!.label}/${servers[0]!.label} of the medians: ${fmt(median(servers[1]!.seconds) / median(servers[0]!.seconds), 3)}`
    )
  process.stdout.write(`${out.join("\n")}\n`)
  return 0
}

await runMain(main)
