// Forking a big repository (`npm run bench:fork`; issue 4 item 2): a repository holding ~100 MB of
// incompressible data is pushed once, then forked BENCH_FORK_ROUNDS times (into a fresh
// organization each time). Measured per fork: from POST /forks to its job reported `succeeded`
// (targets: under 2 s), and the new disk the fork costs — `du` of the whole repositories root
// before and after, which counts hard-linked files once (target: under 5 MB).
// Hearth runs on PostgreSQL (infra/pg/start.sh, or a fresh database on BENCH_DATABASE_URL).
import { writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  basic,
  createAccount,
  execFileP,
  fmt,
  http,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const config = {
  megabytes: Math.round(positive("BENCH_FORK_MB", 100)),
  rounds: Math.max(1, Math.round(positive("BENCH_FORK_ROUNDS", 5)))
}
const TARGETS = { seconds: 2, diskMb: 5 } as const
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }
const auth = basic(ACCOUNT.username, ACCOUNT.password)

const api = async (base: string, method: string, path: string, body?: unknown) => {
  const res = await http(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = res.body.toString()
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text) }
}

/** Disk used under `dir` in KiB, each hard-linked file counted once. */
const diskKiB = async (dir: string) => Number((await execFileP("du", ["-sk", dir])).stdout.split("\t")[0])

const main = async () => {
  const load0 = os.loadavg()
  const pg = await preparePostgres()
  const dataDir = tempDir("hearth-bench-fork-")
  const backend: Backend = { name: "postgres", dataDir, databaseUrl: pg.url, logFile: join(dataDir, "hearth.log") }
  await createAccount(backend, ACCOUNT)
  const hearth = await startHearth(backend)
  const root = join(dataDir, "repositories")

  log(`making a repository of ${config.megabytes} MB of random data`)
  if ((await api(hearth.base, "POST", "/user/repos", { name: "big" })).status !== 201)
    throw new Error("could not create the repository")
  const work = tempDir("hearth-bench-fork-src-")
  await execFileP("git", ["init", "-q", "-b", "main", work])
  const files = Math.max(1, Math.ceil(config.megabytes / 5))
  for (let i = 0; i < files; i++) {
    await execFileP("sh", ["-c", `head -c ${Math.min(5, config.megabytes - i * 5)}M /dev/urandom > data-${i}.bin`], {
      cwd: work
    })
  }
  const git = (args: ReadonlyArray<string>) =>
    execFileP("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: work,
      maxBuffer: 1 << 26
    })
  await git(["add", "."])
  await git(["commit", "-q", "-m", "data"])
  const remote = new URL(`${hearth.base}/bench/big.git`)
  remote.username = ACCOUNT.username
  remote.password = ACCOUNT.password
  await git(["push", "-q", remote.toString(), "main"])
  const sourceKiB = await diskKiB(join(root, "bench", "big.git"))
  log(`source repository: ${fmt(sourceKiB / 1024, 1)} MB on disk`)

  const times: Array<number> = []
  const disks: Array<number> = []
  for (let round = 1; round <= config.rounds; round++) {
    const org = `fork-${round}`
    if ((await api(hearth.base, "POST", "/orgs", { username: org })).status !== 201)
      throw new Error(`could not create ${org}`)
    const before = await diskKiB(root)
    const started = performance.now()
    const forked = await api(hearth.base, "POST", "/repos/bench/big/forks", { organization: org })
    if (forked.status !== 202) throw new Error(`fork answered ${forked.status}`)
    for (;;) {
      const jobs = await api(hearth.base, "GET", `/repos/${org}/big/jobs`)
      const job = (jobs.json ?? []).find((j: { kind: string }) => j.kind === "fork")
      if (job?.state === "succeeded") break
      if (job?.state === "failed") throw new Error(`fork job failed: ${job.last_error}`)
      if (performance.now() - started > 120_000) throw new Error("fork job did not finish within 120 s")
      await new Promise((r) => setTimeout(r, 10))
    }
    const seconds = (performance.now() - started) / 1000
    const disk = ((await diskKiB(root)) - before) / 1024
    times.push(seconds)
    disks.push(disk)
    log(`round ${round}: fork done after ${fmt(seconds, 3)} s, +${fmt(disk, 2)} MB on disk`)
  }

  const t = median(times)
  const d = median(disks)
  const rows = [
    `${machineLine(load0)}`,
    `Date: ${new Date().toISOString()}; PostgreSQL ${pg.server}; source ${fmt(sourceKiB / 1024, 1)} MB on disk; ${config.rounds} forks`,
    "",
    "| measure | median | max | target | met |",
    "|---|---:|---:|---:|---|",
    `| POST /forks to job succeeded | ${fmt(t, 3)} s | ${fmt(Math.max(...times), 3)} s | < ${TARGETS.seconds} s | ${t < TARGETS.seconds ? "yes" : "NO"} |`,
    `| new disk per fork | ${fmt(d, 2)} MB | ${fmt(Math.max(...disks), 2)} MB | < ${TARGETS.diskMb} MB | ${d < TARGETS.diskMb ? "yes" : "NO"} |`
  ]
  process.stdout.write(`${rows.join("\n")}\n`)
  if (process.env.BENCH_OUTPUT)
    writeFileSync(process.env.BENCH_OUTPUT, JSON.stringify({ times, disks, sourceKiB }, null, 2))
  return (t < TARGETS.seconds ? 0 : 1) + (d < TARGETS.diskMb ? 0 : 1)
}

await runMain(main)
