// The issue tracker at scale (`npm run bench:issues`; issue 18, speed section). For each database
// (PostgreSQL through infra/pg/start.sh or BENCH_DATABASE_URL, then the embedded one), one public
// repository `bench/tracker` gets BENCH_ISSUES issues (default 100,000) and five times as many
// comments, generated through the service layer (IssuesService.create / createComment, in child
// processes on the server's own settings and data dir — BENCH_GEN_PROCESSES at once on PostgreSQL,
// one embedded — so every rule runs: issue numbers, label comments, mentions, cross-references,
// events, notifications), before the server is started. The generated data is kept between runs
// (BENCH_ISSUES_CACHE, keyed by the scale and the migrations), with checkpoints while it is made
// (BENCH_ISSUES_CHECKPOINT comments), so that a re-run restores it and an interrupted one resumes.
// Then, over HTTP, one request at a time, the four cases interleaved request by request:
//   - list open issues filtered by one label, page 1 (target p50 ≤ 10 ms);
//   - GET /repos/issues/search?q=<word> (≤ 25 ms);
//   - one issue with its 200-comment timeline: GET the issue, then its /comments (≤ 15 ms, the two together);
//   - POST an issue with a mention and three labels, its notifications included (≤ 15 ms).
// Beside each, the baseline: the same question asked directly in SQL on the same database in the
// same run (a child process on the same data dir or database, before the server starts: the
// embedded data dir is locked while the server runs), and the ratio Hearth / SQL of the p50s.
//
// BENCH_TREES="before=/path/to/checkout,after=." measures several checkouts on the same generated
// data, one after the other (the data is generated with the first one's code, and each server
// migrates the schema forward when it starts, so list the older checkout first).
// BENCH_ISSUES_GENERATOR=/path/to/checkout generates (and keys the kept data by its migrations)
// and runs the SQL baseline in place of the first of BENCH_TREES: older data, newer servers.
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import os from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import type * as EffectTypes from "effect/Effect"
import {
  type Account,
  type Backend,
  type BackendName,
  children,
  createAccount,
  createToken,
  execFileP,
  fmt,
  hearthEnv,
  http,
  log,
  machineLine,
  nodeBin,
  pgTool,
  positive,
  preparePostgres,
  quantile,
  root,
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  issues: Math.round(positive("BENCH_ISSUES", 100_000)),
  /** The embedded database's own N (default BENCH_ISSUES): its generation is several times slower. */
  issuesEmbedded: Math.round(positive("BENCH_ISSUES_EMBEDDED", positive("BENCH_ISSUES", 100_000))),
  commentsPerIssue: positive("BENCH_COMMENTS_PER_ISSUE", 5),
  samples: Math.round(positive("BENCH_SAMPLES", 200)),
  warmup: Math.round(positive("BENCH_WARMUP", 20)),
  concurrency: Math.round(positive("BENCH_GEN_CONCURRENCY", 6)),
  /** Generating processes on PostgreSQL (the embedded data dir admits one). */
  processes: Math.round(positive("BENCH_GEN_PROCESSES", 2)),
  /** Comments between two checkpoints of the generation (a resumed run starts from the last). */
  checkpoint: Math.round(positive("BENCH_ISSUES_CHECKPOINT", 100_000)),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown database "${b}"`)
    return b as BackendName
  }),
  trees: (process.env.BENCH_TREES ?? "this=.").split(",").map((entry) => {
    const [name, dir] = entry.includes("=") ? entry.split("=", 2) : [entry, entry]
    return { name: name!, dir: resolve(root, dir!) }
  }),
  /** The checkout that generates the data and asks the SQL baseline (default: the first tree). */
  generator: process.env.BENCH_ISSUES_GENERATOR,
  output: process.env.BENCH_OUTPUT,
  /** "postgres": the embedded database gets a copy of PostgreSQL's generated rows instead of its own generation. */
  embeddedFrom: process.env.BENCH_ISSUES_EMBEDDED_FROM,
  /** The embedded server's and baseline's `[database] EMBEDDED_SHARED_BUFFERS` (default: Hearth's). */
  sharedBuffers: process.env.BENCH_ISSUES_SHARED_BUFFERS
}

const ACCOUNT: Account = { username: "bench", password: "bench-password-123", admin: true }
const OTHERS = ["alice", "bob", "carol"] as const
const PASSWORD = "bench-password-123"
const REPO = "tracker"
const LABELS = 20
/** The word searched for: its letters (q, k) appear in no other generated word, so no trigram is shared. */
const WORD = "quokka"
const BIG_COMMENTS = 200

const CASES = [
  { key: "list", name: "GET /repos/{o}/{r}/issues?state=open&labels=bug (page 1)", target: 10 },
  { key: "search", name: `GET /repos/issues/search?q=${WORD}`, target: 25 },
  { key: "timeline", name: "GET /issues/{n} + /issues/{n}/comments (200 comments)", target: 15 },
  { key: "create", name: "POST /issues (a mention, 3 labels; notifications)", target: 15 }
] as const
type CaseKey = (typeof CASES)[number]["key"]

// ---------------------------------------------------------------- what is generated

/** A small deterministic PRNG (mulberry32), so that both databases get the same data. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const CONSONANTS = "bcdfghlmnprstvw"
const VOWELS = "aeiou"
/** 2,000 pronounceable words without q or k. */
const VOCABULARY = (() => {
  const rand = prng(7)
  const words = new Set<string>()
  while (words.size < 2000) {
    let w = ""
    const syllables = 2 + Math.floor(rand() * 2)
    for (let s = 0; s < syllables; s++)
      w += CONSONANTS[Math.floor(rand() * CONSONANTS.length)]! + VOWELS[Math.floor(rand() * VOWELS.length)]!
    words.add(w)
  }
  return [...words]
})()

const sentence = (rand: () => number, words: number, withWord: boolean) => {
  const out: Array<string> = []
  for (let i = 0; i < words; i++) out.push(VOCABULARY[Math.floor(rand() * VOCABULARY.length)]!)
  if (withWord) out[Math.floor(rand() * out.length)] = WORD
  return out.join(" ")
}

export interface Plan {
  readonly issues: number
  readonly comments: number
  /** The issues with BIG_COMMENTS comments each. */
  readonly big: ReadonlyArray<number>
}

const planOf = (issues: number, perIssue: number): Plan => {
  const comments = Math.round(issues * perIssue)
  const bigCount = Math.max(1, Math.min(Math.floor(issues / 1000), Math.floor(comments / BIG_COMMENTS)))
  const step = Math.floor(issues / bigCount)
  return { issues, comments, big: Array.from({ length: bigCount }, (_, j) => 1 + j * step) }
}

/** Issue i (1-based): ~10 % carry `bug`, 1–2 other labels each, 30 % closed, 1 % mention WORD. */
const issueSpec = (i: number, labelIds: ReadonlyArray<number>) => {
  const rand = prng(1_000_003 * i)
  const labels = new Set<number>()
  if (i % 10 === 0) labels.add(labelIds[0]!)
  const extra = 1 + Math.floor(rand() * 2)
  for (let n = 0; n < extra; n++) labels.add(labelIds[1 + Math.floor(rand() * (labelIds.length - 1))]!)
  const withWord = i % 100 === 7
  return {
    title: `${sentence(rand, 5, withWord && i % 200 === 7)} ${i}`,
    body: sentence(rand, 30, withWord && i % 200 !== 7),
    labels: [...labels],
    closed: i % 10 === 3 || i % 10 === 6 || i % 10 === 9
  }
}

/** Which issue each comment goes to: BIG_COMMENTS for each big issue, the rest spread at random, all shuffled. */
const commentTargets = (plan: Plan) => {
  const rand = prng(42)
  const big = new Set(plan.big)
  const targets = new Int32Array(plan.comments)
  let k = 0
  for (const index of plan.big) for (let n = 0; n < BIG_COMMENTS && k < plan.comments; n++) targets[k++] = index
  while (k < plan.comments) {
    const index = 1 + Math.floor(rand() * plan.issues)
    if (!big.has(index)) targets[k++] = index
  }
  for (let i = targets.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1))
    const t = targets[i]!
    targets[i] = targets[j]!
    targets[j] = t
  }
  return targets
}

// ---------------------------------------------------------------- child: generation

interface ChildSpec {
  readonly backend: BackendName
  readonly src: string
  readonly issues: number
  readonly commentsPerIssue: number
  readonly concurrency: number
  readonly samples: number
  readonly warmup: number
  /** This generating child's share: the issues (or comments) i with i % parts === part. */
  readonly part?: number
  readonly parts?: number
  /** What this child makes: comments from ≤ k < to (in the order of commentTargets), or issues from + 1 … to. */
  readonly from?: number
  readonly to?: number
}

const childSpec = () => JSON.parse(process.env.BENCH_ISSUES_CHILD ?? "{}") as ChildSpec
const srcUrl = (spec: ChildSpec, file: string) => pathToFileURL(join(spec.src, file)).href
const stamp = (ms: number) => `${fmt(ms / 1000, 1)} s`

/**
 * A generating child: `issues` creates its share of the issues (IssuesService.create) and prints
 * the number each i got; `comments` creates its share of the comments (IssuesService.createComment)
 * on the numbers of BENCH_ISSUES_CREATED (a file). Several children run at once on PostgreSQL.
 */
const generate = async (what: "issues" | "comments") => {
  const spec = childSpec()
  const part = spec.part ?? 0
  const parts = spec.parts ?? 1
  const { Effect, Layer, Option } = await import("effect")
  const App = (await import(srcUrl(spec, "App.ts"))) as typeof import("../../src/App.ts")
  const SettingsModule = (await import(
    srcUrl(spec, "config/Settings.ts")
  )) as typeof import("../../src/config/Settings.ts")
  const { UsersRepo } = (await import(srcUrl(spec, "users/Repo.ts"))) as typeof import("../../src/users/Repo.ts")
  const { ReposRepo } = (await import(srcUrl(spec, "repos/Repo.ts"))) as typeof import("../../src/repos/Repo.ts")
  const { RepoPolicy } = (await import(srcUrl(spec, "repos/Policy.ts"))) as typeof import("../../src/repos/Policy.ts")
  const { IssuesService } = (await import(
    srcUrl(spec, "issues/Service.ts")
  )) as typeof import("../../src/issues/Service.ts")
  const { IssuesRepo } = (await import(srcUrl(spec, "issues/Repo.ts"))) as typeof import("../../src/issues/Repo.ts")
  const plan = planOf(spec.issues, spec.commentsPerIssue)
  const say = (m: string) =>
    process.stderr.write(`[bench] ${spec.backend}${parts > 1 ? ` (${part + 1}/${parts})` : ""}: ${m}\n`)

  const program = Effect.gen(function* () {
    const users = yield* UsersRepo
    const repos = yield* ReposRepo
    const policy = yield* RepoPolicy
    const issues = yield* IssuesService
    const issuesRepo = yield* IssuesRepo
    const owner = Option.getOrThrow(yield* users.findByName(ACCOUNT.username))
    const repo = Option.getOrThrow(yield* repos.findByName(owner.id, REPO))
    const openedAs = (name: string) =>
      Effect.gen(function* () {
        const user = Option.getOrThrow(yield* users.findByName(name))
        const caller = { user, scopes: undefined, method: "password" as const }
        const access = yield* policy.access(caller, repo, owner)
        return { owner, repo, access, path: "", caller }
      })
    const posters = [yield* openedAs(ACCOUNT.username), ...(yield* Effect.forEach(OTHERS, openedAs))]
    const labelRows = yield* issuesRepo.listLabels({ repoId: repo.id }, "", undefined)
    const byName = new Map(labelRows.rows.map((l) => [l.name, l.id]))
    const labelIds = ["bug", ...Array.from({ length: LABELS - 1 }, (_, n) => `label-${n + 1}`)].map(
      (n) => byName.get(n)!
    )

    const progress = (label: string, total: number) => {
      const started = performance.now()
      let done = 0
      const every = Math.max(1, Math.floor(total / 20))
      return Effect.sync(() => {
        done++
        if (done % every === 0 || done === total) {
          const elapsed = performance.now() - started
          const rate = (done / elapsed) * 1000
          say(
            `${label} ${fmt(done)}/${fmt(total)} (${fmt((100 * done) / total)} %), ${fmt(rate)}/s, ` +
              `${stamp(elapsed)} so far, about ${stamp((total - done) / (rate / 1000))} to go`
          )
        }
      })
    }
    const mine = (n: number) => n % parts === part

    if (what === "issues") {
      // Issues from + 1 … to (1-based).
      const from = spec.from ?? 0
      const to = spec.to ?? plan.issues
      const indexes = Array.from({ length: to - from }, (_, n) => from + n + 1).filter(mine)
      const tick = progress("issues", indexes.length)
      // With concurrent creates, numbers follow the order of commits, not the loop's i: each i's
      // number is kept, for the comments and the big issues.
      const created: Array<[number, number]> = []
      yield* Effect.forEach(
        indexes,
        (i) =>
          Effect.gen(function* () {
            const s = issueSpec(i, labelIds)
            const issue = yield* issues.create(posters[0]!, {
              title: s.title,
              body: s.body,
              labels: s.labels,
              closed: s.closed
            })
            created.push([i, issue.number])
            yield* tick
          }),
        { concurrency: spec.concurrency, discard: true }
      )
      return { created, labelIds }
    }
    const created = JSON.parse(readFileSync(process.env.BENCH_ISSUES_CREATED!, "utf8")) as Array<number>
    const targets = commentTargets(plan)
    const from = spec.from ?? 0
    const to = spec.to ?? targets.length
    const mineK = Array.from({ length: to - from }, (_, n) => from + n).filter(mine)
    const tick = progress("comments", mineK.length)
    yield* Effect.forEach(
      mineK,
      (k) =>
        Effect.gen(function* () {
          const poster = posters[k % posters.length]!
          // Each comment's words from its own k: the same text however the comments are shared out.
          const body = sentence(prng(7_919 * k + 1), 20, k % 500 === 11)
          yield* issues.createComment(poster, String(created[targets[k]!]), body, undefined)
          yield* tick
        }),
      { concurrency: spec.concurrency, discard: true }
    )
    return { created: [], labelIds }
  })

  const layer = App.CommandAppLayer.pipe(Layer.provide(SettingsModule.layer()))
  const result = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)) as never)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}

// ---------------------------------------------------------------- child: the SQL baseline

const baseline = async () => {
  const spec = childSpec()
  const { Effect, Layer } = await import("effect")
  const { SqlClient } = await import("effect/sql/SqlClient")
  const SettingsModule = (await import(
    srcUrl(spec, "config/Settings.ts")
  )) as typeof import("../../src/config/Settings.ts")
  const Database = (await import(srcUrl(spec, "db/Database.ts"))) as typeof import("../../src/db/Database.ts")
  const big = JSON.parse(process.env.BENCH_ISSUES_BIG ?? "[]") as Array<number>

  const program = Effect.gen(function* () {
    const sql = yield* SqlClient
    yield* sql`ANALYZE`
    const [repo] = yield* sql<{ id: string; owner_id: string }>`SELECT r.id, r.owner_id FROM repositories r
      JOIN users u ON u.id = r.owner_id WHERE u.lower_name = ${ACCOUNT.username} AND r.lower_name = ${REPO}`
    const repoId = Number(repo!.id)
    const labels = yield* sql<{
      id: string
      name: string
    }>`SELECT id, name FROM labels WHERE repo_id = ${repoId} ORDER BY id`
    const bug = Number(labels.find((l) => l.name === "bug")!.id)
    const three = labels.slice(1, 4).map((l) => Number(l.id))
    const [alice] = yield* sql<{ id: string }>`SELECT id FROM users WHERE lower_name = 'alice'`
    const [owner] = yield* sql<{ id: string }>`SELECT id FROM users WHERE lower_name = ${ACCOUNT.username}`
    const pattern = `%${WORD}%`

    // The same questions as the four requests, each the way one would write it by hand on these
    // tables: the count and the page (and what the page shows of each row: labels, posters).
    const queries: Record<CaseKey, (n: number) => EffectTypes.Effect<unknown, unknown>> = {
      list: () =>
        Effect.gen(function* () {
          yield* sql`SELECT count(*) FROM issues i JOIN issue_labels il ON il.issue_id = i.id
            WHERE i.repo_id = ${repoId} AND NOT i.is_closed AND NOT i.is_pull AND il.label_id = ${bug}`
          const rows = yield* sql<{ id: string; poster_id: string }>`SELECT i.* FROM issues i
            JOIN issue_labels il ON il.issue_id = i.id
            WHERE i.repo_id = ${repoId} AND NOT i.is_closed AND NOT i.is_pull AND il.label_id = ${bug}
            ORDER BY i.created_at DESC, i.id DESC LIMIT 30`
          yield* sql`SELECT il.issue_id, l.* FROM issue_labels il JOIN labels l ON l.id = il.label_id
            WHERE il.issue_id IN ${sql.in(rows.map((r) => r.id))}`
          yield* sql`SELECT * FROM users WHERE id IN ${sql.in([...new Set(rows.map((r) => r.poster_id))])}`
        }),
      search: () =>
        Effect.gen(function* () {
          const matching = sql`SELECT id FROM issues WHERE title ILIKE ${pattern}
            UNION SELECT id FROM issues WHERE body ILIKE ${pattern}
            UNION SELECT issue_id FROM comments WHERE type = 0 AND body ILIKE ${pattern}`
          const visible = sql`SELECT id FROM repositories WHERE NOT is_private OR owner_id = ${Number(owner!.id)}`
          yield* sql`SELECT count(*) FROM issues i WHERE i.id IN (${matching}) AND NOT i.is_closed
            AND i.repo_id IN (${visible})`
          const rows = yield* sql<{ id: string; poster_id: string }>`SELECT i.* FROM issues i
            WHERE i.id IN (${matching}) AND NOT i.is_closed AND i.repo_id IN (${visible})
            ORDER BY i.created_at DESC, i.id DESC LIMIT 30`
          yield* sql`SELECT il.issue_id, l.* FROM issue_labels il JOIN labels l ON l.id = il.label_id
            WHERE il.issue_id IN ${sql.in(rows.map((r) => r.id))}`
          yield* sql`SELECT * FROM users WHERE id IN ${sql.in([...new Set(rows.map((r) => r.poster_id))])}`
        }),
      timeline: (n) =>
        Effect.gen(function* () {
          const [issue] = yield* sql<{ id: string }>`SELECT * FROM issues WHERE repo_id = ${repoId}
            AND index = ${big[n % big.length]!}`
          yield* sql`SELECT il.issue_id, l.* FROM issue_labels il JOIN labels l ON l.id = il.label_id
            WHERE il.issue_id = ${issue!.id}`
          const comments = yield* sql<{ poster_id: string }>`SELECT * FROM comments WHERE issue_id = ${issue!.id}
            AND type = 0 ORDER BY created_at, id`
          yield* sql`SELECT * FROM users WHERE id IN ${sql.in([...new Set(comments.map((c) => c.poster_id))])}`
        }),
      create: (n) =>
        sql.withTransaction(
          Effect.gen(function* () {
            const [counter] = yield* sql<{ max_index: string }>`UPDATE issue_index SET max_index = max_index + 1
              WHERE repo_id = ${repoId} RETURNING max_index`
            const [issue] = yield* sql<{ id: string }>`INSERT INTO issues (repo_id, index, poster_id, title, body)
              VALUES (${repoId}, ${counter!.max_index}, ${Number(owner!.id)}, ${`baseline ${n}`},
              ${"please look, @alice"}) RETURNING id`
            yield* sql`UPDATE repositories SET num_issues = num_issues + 1 WHERE id = ${repoId}`
            for (const label of three) {
              yield* sql`INSERT INTO issue_labels (issue_id, label_id) VALUES (${issue!.id}, ${label})`
              yield* sql`INSERT INTO comments (issue_id, type, poster_id, label_id, body)
                VALUES (${issue!.id}, 7, ${Number(owner!.id)}, ${label}, '1')`
            }
            yield* sql`INSERT INTO issue_mentions (issue_id, user_id) VALUES (${issue!.id}, ${Number(alice!.id)})`
            yield* sql`INSERT INTO notifications (user_id, repo_id, status, source, issue_id, updated_by)
              VALUES (${Number(alice!.id)}, ${repoId}, 1, 1, ${issue!.id}, ${Number(owner!.id)})`
          })
        )
    }
    const times: Record<CaseKey, Array<number>> = { list: [], search: [], timeline: [], create: [] }
    for (let n = 0; n < spec.warmup + spec.samples; n++) {
      for (const c of CASES) {
        const started = performance.now()
        yield* queries[c.key](n)
        if (n >= spec.warmup) times[c.key].push(performance.now() - started)
      }
    }
    // The baseline's own issues go again, so that the server starts from the generated data.
    yield* sql`DELETE FROM issues WHERE repo_id = ${repoId} AND title LIKE 'baseline %'`
    yield* sql`UPDATE repositories SET num_issues = (SELECT count(*) FROM issues WHERE repo_id = ${repoId} AND NOT is_pull)
      WHERE id = ${repoId}`
    return times
  })
  const layer = Database.clientLayer.pipe(Layer.provide(SettingsModule.layer()))
  const result = await Effect.runPromise(Effect.scoped(Effect.provide(program, layer)) as never)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}

/**
 * A child (BENCH_ISSUES_EMBEDDED_FROM=postgres): the embedded database filled with the rows of the
 * PostgreSQL data this bench generated (its `db.dump`, BENCH_ISSUES_DUMP) — every row the service
 * layer wrote there, notifications, label comments and references included, copied as they are;
 * the embedded server's own generation would take a day at 100,000 issues (README). The schema is
 * the checkout's own migrations; the rows go in through PGlite's COPY, with triggers and foreign
 * keys off while they load (`session_replication_role`), the sequences set as in the dump.
 */
const copyFromPostgres = async () => {
  const spec = childSpec()
  const dump = process.env.BENCH_ISSUES_DUMP ?? ""
  const { Effect, Layer } = await import("effect")
  const SettingsModule = (await import(
    srcUrl(spec, "config/Settings.ts")
  )) as typeof import("../../src/config/Settings.ts")
  const Database = (await import(srcUrl(spec, "db/Database.ts"))) as typeof import("../../src/db/Database.ts")
  // The schema first, by the checkout's migrations (the scope closes the database again).
  await Effect.runPromise(
    Effect.scoped(Layer.build(Database.layer.pipe(Layer.provide(SettingsModule.layer())))) as never
  )
  const { PGlite } = await import("@electric-sql/pglite")
  const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm")
  const dataDir = process.env.HEARTH__server__APP_DATA_PATH ?? ""
  const db = await PGlite.create({ dataDir: join(dataDir, "db"), extensions: { pg_trgm } })
  const say = (m: string) => process.stderr.write(`[bench] embedded: ${m}\n`)
  await db.exec("SET session_replication_role = replica")
  const tables = await db.query<{ name: string }>(
    "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'hearth_migrations'"
  )
  await db.exec(`TRUNCATE ${tables.rows.map((t) => t.name).join(", ")} RESTART IDENTITY`)
  const existing = new Set(tables.rows.map((t) => t.name))
  const restore = spawn(pgTool("pg_restore"), ["--data-only", "--no-owner", "-f", "-", dump], {
    stdio: ["ignore", "pipe", "inherit"]
  })
  const { createInterface } = await import("node:readline")
  let copy: string | undefined
  let rows: Array<string> = []
  let bytes = 0
  let total = 0
  const setvals: Array<string> = []
  const flush = async () => {
    if (copy !== undefined && rows.length > 0) await db.query(`${copy} FROM '/dev/blob'`, [], { blob: new Blob(rows) })
    total += rows.length
    rows = []
    bytes = 0
  }
  for await (const line of createInterface({ input: restore.stdout!, crlfDelay: Infinity })) {
    if (copy === undefined) {
      // The dump's data: `COPY public.t (a, b) FROM stdin;`, its rows one per line (text format), `\.`.
      // Tables the embedded schema does not have (effect's cluster tables, made at run time on
      // PostgreSQL only) and the migrations' own record are left out.
      const header = /^(COPY public\.(\S+) \(.*\)) FROM stdin;$/.exec(line)
      if (header !== null) copy = existing.has(header[2]!) ? header[1] : ""
      else if (line.startsWith("SELECT pg_catalog.setval(")) setvals.push(line)
      continue
    }
    if (line === "\\.") {
      if (copy !== "") await flush()
      copy = undefined
      continue
    }
    if (copy === "") continue
    rows.push(`${line}\n`)
    bytes += line.length + 1
    if (bytes > 16 << 20) {
      await flush()
      say(`${fmt(total)} rows copied`)
    }
  }
  const code = await new Promise<number | null>((done) =>
    restore.exitCode === null ? restore.once("exit", (c) => done(c)) : done(restore.exitCode)
  )
  if (code !== 0) throw new Error(`pg_restore of ${dump} exited with ${code}`)
  const sequences = await db.query<{ name: string }>("SELECT 'public.' || sequencename AS name FROM pg_sequences")
  const known = new Set(sequences.rows.map((row) => row.name))
  for (const setval of setvals) if (known.has(/setval\('([^']+)'/.exec(setval)?.[1] ?? "")) await db.exec(setval)
  await db.exec("SET session_replication_role = DEFAULT")
  // As PostgreSQL's autovacuum would after a bulk load (and Hearth's own pass does on the embedded
  // database, src/db/Maintenance.ts): statistics, and the visibility map for index-only scans.
  await db.exec("VACUUM ANALYZE")
  await db.close()
  say(`${fmt(total)} rows copied from PostgreSQL's generated data`)
  process.stdout.write(`${JSON.stringify({ rows: total })}\n`)
  process.exit(0)
}

// ---------------------------------------------------------------- the parent

/** Runs this file as a child in `mode`, its stderr shown (progress), its last stdout line parsed. */
const runChild = async <A>(mode: string, backend: Backend, spec: ChildSpec, extra: Record<string, string> = {}) => {
  const env = { ...hearthEnv(backend, 3000), BENCH_ISSUES_CHILD: JSON.stringify(spec), ...extra }
  // BENCH_ISSUES_PROFILE=<dir>: a CPU profile of each child (where generation's time goes).
  const profile = process.env.BENCH_ISSUES_PROFILE
  const flags = profile === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${profile}`]
  const child: ChildProcess = spawn(nodeBin, [...flags, join(root, "infra/bench/issues.ts"), mode], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "inherit"]
  })
  children.add(child)
  let out = ""
  child.stdout!.on("data", (chunk: Buffer) => {
    out += chunk.toString()
  })
  const code = await new Promise<number | null>((done) => child.once("exit", (c) => done(c)))
  children.delete(child)
  if (code !== 0) throw new Error(`${mode} (${backend.name}) exited with ${code}`)
  const last = out.trim().split("\n").at(-1) ?? ""
  return JSON.parse(last) as A
}

interface Server {
  readonly base: string
  readonly token: string
  readonly agent: Agent
}

const call = async (server: Server, method: string, path: string, body?: unknown, expect = 200) => {
  const res = await http(`${server.base}/api/v1${path}`, {
    method,
    agent: server.agent,
    timeoutMs: 60_000,
    headers: { authorization: `token ${server.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (res.status !== expect)
    throw new Error(`${method} ${path} answered ${res.status}: ${res.body.toString().slice(0, 300)}`)
  return res
}

/** Accounts, the repository and its labels, over the API; the tokens of `bench` and `alice`. */
const setUp = async (backend: Backend) => {
  await createAccount(backend, ACCOUNT)
  const running = await startHearth(backend)
  const agent = new Agent({ keepAlive: true })
  try {
    const server: Server = { base: running.base, token: await createToken(running.base, ACCOUNT, ["all"]), agent }
    for (const name of OTHERS) {
      await call(
        server,
        "POST",
        "/admin/users",
        { username: name, email: `${name}@example.com`, password: PASSWORD, must_change_password: false },
        201
      )
    }
    await call(server, "POST", "/user/repos", { name: REPO, private: false }, 201)
    for (let n = 0; n < LABELS; n++) {
      const name = n === 0 ? "bug" : `label-${n}`
      await call(server, "POST", `/repos/${ACCOUNT.username}/${REPO}/labels`, { name, color: "#ee0701" }, 201)
    }
    const aliceToken = await createToken(running.base, { username: "alice", password: PASSWORD }, ["all"])
    return { token: server.token, aliceToken }
  } finally {
    agent.destroy()
    await stopChild(running.child)
  }
}

type Times = Record<CaseKey, Array<number>>

/** The four requests, interleaved one by one; each sample's time in ms. */
const measure = async (server: Server, big: ReadonlyArray<number>, labelIds: ReadonlyArray<number>) => {
  const path = `/repos/${ACCOUNT.username}/${REPO}`
  let created = 0
  const requests: Record<CaseKey, (n: number) => Promise<void>> = {
    list: async () => {
      await call(server, "GET", `${path}/issues?state=open&type=issues&labels=bug&page=1`)
    },
    search: async () => {
      await call(server, "GET", `/repos/issues/search?q=${WORD}`)
    },
    timeline: async (n) => {
      const index = big[n % big.length]!
      await call(server, "GET", `${path}/issues/${index}`)
      const res = await call(server, "GET", `${path}/issues/${index}/comments`)
      if (n === 0) {
        const count = (JSON.parse(res.body.toString()) as Array<unknown>).length
        if (count !== BIG_COMMENTS) log(`issue ${index} has ${count} comments, not ${BIG_COMMENTS}`)
      }
    },
    create: async (n) => {
      await call(
        server,
        "POST",
        `${path}/issues`,
        { title: `measured ${n}`, body: "Please have a look, @alice.", labels: labelIds.slice(1, 4) },
        201
      )
      created++
    }
  }
  const times: Times = { list: [], search: [], timeline: [], create: [] }
  for (let n = 0; n < config.warmup + config.samples; n++) {
    for (const c of CASES) {
      const started = performance.now()
      await requests[c.key](n)
      if (n >= config.warmup) times[c.key].push(performance.now() - started)
    }
  }
  return { times, created }
}

const p = (values: ReadonlyArray<number>, q: number) =>
  quantile(
    [...values].sort((a, b) => a - b),
    q
  )

interface BackendResult {
  readonly backend: BackendName
  readonly issues: number
  readonly comments: number
  readonly generation: Generated
  /** The generated data came from the cache (generated by an earlier run). */
  readonly restored: boolean
  /** The embedded database holds a copy of PostgreSQL's generated rows (BENCH_ISSUES_EMBEDDED_FROM). */
  readonly copied: boolean
  readonly sql: Times
  readonly trees: Array<{ name: string; times: Times; notified: number; created: number }>
}

interface Generated {
  readonly issuesMs: number
  readonly commentsMs: number
  readonly big: Array<number>
  readonly labelIds: Array<number>
  readonly token: string
  readonly aliceToken: string
  /** Generating processes (PostgreSQL: several at once; embedded: one). */
  readonly processes: number
}

/** Bump when what is generated changes, so that older caches are not used. */
const GENERATOR_VERSION = 2

/**
 * Where the data generated for `name` at this scale is kept between runs (BENCH_ISSUES_CACHE, by
 * default ~/.cache/hearth-bench; "off" keeps nothing): a directory named by the scale and a hash
 * of the generator's version, the scale and the migrations (names and contents) of the checkout
 * that generates, so that a new migration or another scale generates afresh.
 */
const cacheDir = (name: BackendName, plan: Plan, tree: string) => {
  const base = process.env.BENCH_ISSUES_CACHE ?? join(os.homedir(), ".cache/hearth-bench")
  if (base === "off") return undefined
  const migrations = join(tree, "src/db/migrations")
  const hash = createHash("sha256").update(
    JSON.stringify({ GENERATOR_VERSION, name, plan, LABELS, BIG_COMMENTS, perIssue: config.commentsPerIssue })
  )
  for (const file of readdirSync(migrations).sort()) hash.update(file).update(readFileSync(join(migrations, file)))
  return join(base, `issues-${name}-${plan.issues}-${hash.digest("hex").slice(0, 12)}`)
}

/** A generation under way: what a resumed run needs. */
interface Checkpoint {
  readonly token: string
  readonly aliceToken: string
  readonly labelIds: Array<number>
  /** The number issue i got, by i. */
  readonly created: Array<number>
  readonly issuesMs: number
  /** Issues 1 … issuesDone are made. */
  readonly issuesDone: number
  readonly commentsMs: number
  /** Comments 0 … commentsDone − 1 (in the order of commentTargets) are made. */
  readonly commentsDone: number
}

/** The data dir as a tar file and, on PostgreSQL, the database as a pg_dump archive; `file` (the JSON) last. */
const saveGenerated = async (backend: Backend, cache: string, file: string, json: unknown) => {
  const partial = `${cache}.partial`
  rmSync(partial, { recursive: true, force: true })
  mkdirSync(partial, { recursive: true })
  await execFileP("tar", ["-C", backend.dataDir, "-cf", join(partial, "data.tar"), "."], { maxBuffer: 1 << 26 })
  if (backend.databaseUrl !== undefined)
    await execFileP(pgTool("pg_dump"), ["-Fc", "-Z1", "-f", join(partial, "db.dump"), backend.databaseUrl])
  writeFileSync(join(partial, file), JSON.stringify(json))
  rmSync(cache, { recursive: true, force: true })
  renameSync(partial, cache)
}

const restoreGenerated = async (backend: Backend, cache: string) => {
  await execFileP("tar", ["-C", backend.dataDir, "-xf", join(cache, "data.tar")], { maxBuffer: 1 << 26 })
  if (backend.databaseUrl !== undefined) {
    await execFileP(pgTool("pg_restore"), ["--no-owner", "-j", "2", "-d", backend.databaseUrl, join(cache, "db.dump")])
    // A restore carries no statistics: gathered now rather than whenever autovacuum wakes.
    await execFileP(pgTool("vacuumdb"), ["--analyze", "--quiet", "-d", backend.databaseUrl])
  }
}

const runBackend = async (name: BackendName): Promise<BackendResult> => {
  const dataDir = tempDir(`hearth-bench-issues-${name}-`)
  let backend: Backend = {
    name,
    dataDir,
    logFile: join(dataDir, "hearth.log"),
    env: {
      HEARTH__log__LEVEL: "Warn",
      ...(name === "embedded" && config.sharedBuffers !== undefined
        ? { HEARTH__database__EMBEDDED_SHARED_BUFFERS: config.sharedBuffers }
        : {})
    }
  }
  // The generating children reach PostgreSQL over its unix socket when there is one: a statement
  // over loopback TCP cost them more CPU in the kernel's socket writes than anything else.
  let generationEnv: Record<string, string> = {}
  if (name === "postgres") {
    const prepared = await preparePostgres()
    backend = { ...backend, databaseUrl: prepared.url }
    if (prepared.socketUrl !== undefined) generationEnv = { DATABASE_URL: prepared.socketUrl }
  }
  const first =
    config.generator === undefined ? config.trees[0]! : { name: "generator", dir: resolve(root, config.generator) }
  backend = { ...backend, tree: first.dir }
  const plan = planOf(
    name === "embedded" && config.embeddedFrom !== "postgres" ? config.issuesEmbedded : config.issues,
    config.commentsPerIssue
  )
  const spec: ChildSpec = {
    backend: name,
    src: join(first.dir, "src"),
    issues: plan.issues,
    commentsPerIssue: config.commentsPerIssue,
    concurrency: config.concurrency,
    samples: config.samples,
    warmup: config.warmup
  }
  const cache = cacheDir(name, plan, first.dir)
  let generated: Generated
  let restored = false
  const copyFrom =
    name === "embedded" && config.embeddedFrom === "postgres"
      ? cacheDir("postgres", planOf(config.issues, config.commentsPerIssue), first.dir)
      : undefined
  if (copyFrom !== undefined) {
    if (!existsSync(join(copyFrom, "meta.json")))
      throw new Error(
        `BENCH_ISSUES_EMBEDDED_FROM=postgres: no generated PostgreSQL data in ${copyFrom} (run PostgreSQL first)`
      )
    // The copy (minutes at 100,000 issues) is kept beside PostgreSQL's data, as the data dir.
    const copied = `${copyFrom}-embedded-copy`
    const copyStarted = performance.now()
    if (existsSync(join(copied, "meta.json"))) {
      log(`${name}: restoring the copy of PostgreSQL's generated data from ${copied}`)
      await restoreGenerated(backend, copied)
    } else {
      log(`${name}: copying PostgreSQL's generated data from ${copyFrom}`)
      await execFileP("tar", ["-C", backend.dataDir, "-xf", join(copyFrom, "data.tar")], { maxBuffer: 1 << 26 })
      await runChild("copy-from-postgres", backend, spec, { BENCH_ISSUES_DUMP: join(copyFrom, "db.dump") })
      if (process.env.BENCH_ISSUES_CACHE !== "off") {
        await saveGenerated(backend, copied, "meta.json", JSON.parse(readFileSync(join(copyFrom, "meta.json"), "utf8")))
      }
    }
    generated = JSON.parse(readFileSync(join(copyFrom, "meta.json"), "utf8")) as Generated
    restored = true
    log(`${name}: copied in ${stamp(performance.now() - copyStarted)}`)
  } else if (cache !== undefined && existsSync(join(cache, "meta.json"))) {
    log(`${name}: restoring the generated data from ${cache}`)
    const restoreStarted = performance.now()
    await restoreGenerated(backend, cache)
    generated = JSON.parse(readFileSync(join(cache, "meta.json"), "utf8")) as Generated
    restored = true
    log(`${name}: restored in ${stamp(performance.now() - restoreStarted)}`)
  } else {
    // The embedded data dir is locked by the process that opens it: one generating child there.
    const parts = name === "postgres" ? config.processes : 1
    const shares = Array.from({ length: parts }, (_, part) => ({ ...spec, part, parts }))
    const checkpoint = cache === undefined ? undefined : `${cache}.checkpoint`
    let state: Checkpoint
    if (checkpoint !== undefined && existsSync(join(checkpoint, "state.json"))) {
      await restoreGenerated(backend, checkpoint)
      state = JSON.parse(readFileSync(join(checkpoint, "state.json"), "utf8")) as Checkpoint
      log(
        `${name}: resuming the generation from ${checkpoint}: ${fmt(state.issuesDone)} of ${fmt(plan.issues)} issues and ` +
          `${fmt(state.commentsDone)} of ${fmt(plan.comments)} comments made`
      )
    } else {
      log(`${name}: setting up (accounts, repository, labels) with ${first.name}`)
      const { token, aliceToken } = await setUp(backend)
      log(
        `${name}: generating ${fmt(plan.issues)} issues and ${fmt(plan.comments)} comments through the service layer ` +
          `(${parts} process${parts > 1 ? "es" : ""} × ${config.concurrency} at a time)`
      )
      state = {
        token,
        aliceToken,
        labelIds: [],
        created: new Array<number>(plan.issues + 1).fill(0),
        issuesMs: 0,
        issuesDone: 0,
        commentsMs: 0,
        commentsDone: 0
      }
    }
    // The issues, then the comments, in chunks, a checkpoint after each: an interrupted run resumes from the last.
    while (state.issuesDone < plan.issues) {
      const from = state.issuesDone
      const to = Math.min(plan.issues, from + Math.ceil(config.checkpoint / 5))
      const t0 = performance.now()
      const issueParts = await Promise.all(
        shares.map((share) =>
          runChild<{ created: Array<[number, number]>; labelIds: Array<number> }>(
            "generate-issues",
            backend,
            { ...share, from, to },
            generationEnv
          )
        )
      )
      const created = [...state.created]
      for (const share of issueParts) for (const [i, number] of share.created) created[i] = number
      state = {
        ...state,
        labelIds: issueParts[0]!.labelIds,
        created,
        issuesMs: state.issuesMs + performance.now() - t0,
        issuesDone: to
      }
      if (checkpoint !== undefined) {
        log(`${name}: ${fmt(to)} issues made; checkpoint in ${checkpoint}`)
        await saveGenerated(backend, checkpoint, "state.json", state)
      }
    }
    const createdFile = join(tempDir("hearth-bench-issues-created-"), "created.json")
    writeFileSync(createdFile, JSON.stringify(state.created))
    while (state.commentsDone < plan.comments) {
      const from = state.commentsDone
      const to = Math.min(plan.comments, from + config.checkpoint)
      const t1 = performance.now()
      await Promise.all(
        shares.map((share) =>
          runChild(
            "generate-comments",
            backend,
            { ...share, from, to },
            {
              ...generationEnv,
              BENCH_ISSUES_CREATED: createdFile
            }
          )
        )
      )
      state = { ...state, commentsMs: state.commentsMs + performance.now() - t1, commentsDone: to }
      if (checkpoint !== undefined && to < plan.comments) {
        log(`${name}: ${fmt(to)} comments made; checkpoint in ${checkpoint}`)
        await saveGenerated(backend, checkpoint, "state.json", state)
      }
    }
    rmSync(createdFile)
    generated = {
      issuesMs: state.issuesMs,
      commentsMs: state.commentsMs,
      big: plan.big.map((i) => state.created[i]!),
      labelIds: state.labelIds,
      token: state.token,
      aliceToken: state.aliceToken,
      processes: parts
    }
    if (cache !== undefined) {
      log(`${name}: keeping the generated data in ${cache} (BENCH_ISSUES_CACHE=off not to)`)
      await saveGenerated(backend, cache, "meta.json", generated)
      if (checkpoint !== undefined) rmSync(checkpoint, { recursive: true, force: true })
    }
  }
  const { token, aliceToken } = generated
  log(
    `${name}: generated in ${stamp(generated.issuesMs)} (issues) + ${stamp(generated.commentsMs)} (comments); SQL baseline`
  )
  const sql = await runChild<Times>("baseline", backend, spec, { BENCH_ISSUES_BIG: JSON.stringify(generated.big) })
  const trees: BackendResult["trees"] = []
  for (const tree of config.trees) {
    log(`${name}: measuring ${tree.name} (${tree.dir})`)
    const running = await startHearth({ ...backend, tree: tree.dir })
    const agent = new Agent({ keepAlive: true })
    try {
      const server: Server = { base: running.base, token, agent }
      // The mentioned account's notification threads, before and after: one more per measured issue.
      const threads = async () => {
        const res = await http(`${running.base}/api/v1/notifications?all=true&limit=1`, {
          headers: { authorization: `token ${aliceToken}` }
        })
        return Number(res.headers["x-total-count"] ?? 0)
      }
      const before = await threads()
      const { times, created } = await measure(server, generated.big, generated.labelIds)
      const notified = (await threads()) - before
      trees.push({ name: tree.name, times, notified, created })
      log(
        `${name} ${tree.name}: ` +
          CASES.map((c) => `${c.key} p50 ${fmt(p(times[c.key], 0.5), 2)} ms (SQL ${fmt(p(sql[c.key], 0.5), 2)})`).join(
            "; "
          )
      )
    } finally {
      agent.destroy()
      await stopChild(running.child)
    }
  }
  return {
    backend: name,
    issues: plan.issues,
    comments: plan.comments,
    generation: generated,
    restored,
    copied: copyFrom !== undefined,
    sql,
    trees
  }
}

const main = async () => {
  const load0 = os.loadavg()
  const started = new Date()
  const results: Array<BackendResult> = []
  for (const name of config.backends) {
    log(
      `${name}: load average ${os
        .loadavg()
        .map((l) => fmt(l, 2))
        .join(" ")}`
    )
    results.push(await runBackend(name))
  }
  let missed = 0
  const lines = [
    machineLine(load0),
    `Date: ${started.toISOString()} to ${new Date().toISOString()}; Node ${process.version}`,
    `Samples: ${config.samples} per case and server after ${config.warmup} of warm-up, one request at a time, the cases interleaved; SQL baseline the same count in a child process before the server started`,
    "",
    "| database | issues / comments | generated in (issues + comments) |",
    "|---|---:|---:|"
  ]
  for (const r of results) {
    lines.push(
      `| ${r.backend} | ${fmt(r.issues)} / ${fmt(r.comments)} | ${stamp(r.generation.issuesMs)} + ${stamp(r.generation.commentsMs)} ` +
        `(${fmt((r.issues / r.generation.issuesMs) * 1000)} + ${fmt((r.comments / r.generation.commentsMs) * 1000)} /s; ` +
        `${r.generation.processes} process${r.generation.processes > 1 ? "es" : ""}${r.copied ? "; PostgreSQL's rows, copied" : r.restored ? "; kept from an earlier run" : ""}) |`
    )
  }
  const treeNames = config.trees.map((t) => t.name)
  lines.push(
    "",
    `| database | case | SQL p50 / p99 | ${treeNames.map((t) => `${t} p50 / p99 (ratio to SQL)`).join(" | ")} | target p50 | met |`,
    `|---|---|---:|${treeNames.map(() => "---:").join("|")}|---:|---|`
  )
  for (const r of results) {
    for (const c of CASES) {
      const sqlP50 = p(r.sql[c.key], 0.5)
      const cells = r.trees.map((t) => {
        const p50 = p(t.times[c.key], 0.5)
        return `${fmt(p50, 2)} / ${fmt(p(t.times[c.key], 0.99), 2)} (${fmt(p50 / sqlP50, 1)}×)`
      })
      const last = r.trees.at(-1)!
      const met = p(last.times[c.key], 0.5) <= c.target
      if (!met) missed++
      lines.push(
        `| ${r.backend} | ${c.name} | ${fmt(sqlP50, 2)} / ${fmt(p(r.sql[c.key], 0.99), 2)} | ${cells.join(" | ")} | ≤ ${c.target} ms | ${met ? "yes" : "NO"} |`
      )
    }
  }
  lines.push("")
  for (const r of results)
    for (const t of r.trees)
      lines.push(
        `${r.backend} ${t.name}: ${fmt(t.created)} issues created mentioning alice, ${fmt(t.notified)} new notification threads for her`
      )
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results, null, 2))
  return missed
}

const mode = process.argv[2]
if (mode === "generate-issues") await generate("issues")
else if (mode === "generate-comments") await generate("comments")
else if (mode === "baseline") await baseline()
else if (mode === "copy-from-postgres") await copyFromPostgres()
else await runMain(main)
