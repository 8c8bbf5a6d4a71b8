// Who may clone and push (issue 15 item 1): every kind of credential × public/private repository
// × clone/push × HTTP/SSH, with the real `git` and `ssh` clients against one server. Git applies
// exactly the API's rules, in its order: the account's state, the token's `repository` scope at
// the level of the operation (read to clone, write to push), then the repository as the API sees
// it (404 when the caller may not read it, 403 "token scope is limited to public repos" for a
// public-only token on a private one, 403 without write access). Readers who may open pull
// requests reach git, whose pre-receive hook refuses them every ref but AGit's refs/for/… with
// Forgejo's message (test/pulls-agit.test.ts). Over HTTP a token counts the
// same sent as git sends it (Basic password) or as `Authorization: token X`. SSH takes keys only:
// user keys act as the account's password would, deploy keys reach only their repository.

import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReposService } from "../src/repos/Service.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createToken, createUser, freePort, type Hearth, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen, sshUrl, type TestKey } from "./support/ssh.ts"

type Op = "clone" | "push"
type Visibility = "public" | "private"

/** What a cell answers: allowed, or refused with this HTTP status and the message git shows. */
type Cell = "ok" | { readonly status: 200 | 401 | 403 | 404; readonly message: string }

const OK = "ok" as const
const ASK = { status: 401, message: "" } as const // git is asked for (other) credentials
const NOT_FOUND = { status: 404, message: "Repository not found" } as const
const PUBLIC_ONLY = { status: 403, message: "token scope is limited to public repos" } as const
const NO_READ_SCOPE = {
  status: 403,
  message: "token does not have at least one of required scope(s): [read:repository]"
} as const
const NO_WRITE_SCOPE = {
  status: 403,
  message: "token does not have at least one of required scope(s): [write:repository]"
} as const
const PROHIBITED = {
  status: 403,
  message: "This account is prohibited from signing in, please contact your site administrator."
} as const
const CHANGE_PASSWORD = { status: 403, message: "You must change your password. Change it at: " } as const
/** A reader's push: git runs, and the pre-receive hook refuses the branch (Forgejo's message). */
const hooked = (user: string) =>
  ({ status: 200, message: `Hearth: User '${user}' is not allowed to push to branch 'cell-` }) as const

/**
 * The HTTP credentials. alice owns both repositories; bob is a read-only collaborator on both;
 * carol is a stranger to both; dave's password is wrong (failed guesses count against his
 * account, so no one else is throttled); frank's account was prohibited from signing in after his
 * token was made; erin must change her password. Tokens are made in beforeAll.
 */
type HttpCredential =
  | { readonly kind: "none" }
  | { readonly kind: "password"; readonly user: string; readonly password?: string }
  | { readonly kind: "token"; readonly user: string; readonly scopes: ReadonlyArray<string>; readonly token?: string }
const HTTP_CREDENTIALS = {
  anonymous: { kind: "none" },
  "owner password": { kind: "password", user: "alice" },
  "wrong password": { kind: "password", user: "dave", password: "not-his-password" },
  "owner token all": { kind: "token", user: "alice", scopes: ["all"] },
  "owner token read:repository": { kind: "token", user: "alice", scopes: ["read:repository"] },
  "owner token write:repository": { kind: "token", user: "alice", scopes: ["write:repository"] },
  "owner token public-only,write:repository": {
    kind: "token",
    user: "alice",
    scopes: ["public-only", "write:repository"]
  },
  "owner token public-only,read:repository": {
    kind: "token",
    user: "alice",
    scopes: ["public-only", "read:repository"]
  },
  "owner token read:user": { kind: "token", user: "alice", scopes: ["read:user"] },
  "unknown token": { kind: "token", user: "dave", scopes: [], token: "0123456789abcdef0123456789abcdef01234567" },
  "read collaborator password": { kind: "password", user: "bob" },
  "read collaborator token write:repository": { kind: "token", user: "bob", scopes: ["write:repository"] },
  "stranger password": { kind: "password", user: "carol" },
  "stranger token public-only,write:repository": {
    kind: "token",
    user: "carol",
    scopes: ["public-only", "write:repository"]
  },
  "prohibited account token all": { kind: "token", user: "frank", scopes: ["all"] },
  "password of an account that must change it": { kind: "password", user: "erin" }
} satisfies Record<string, HttpCredential>
type HttpName = keyof typeof HTTP_CREDENTIALS

/**
 * Git over HTTP. Columns: public clone, public push, private clone, private push. As in the API,
 * the token's scope is checked before the repository (so public-only,read:repository pushing to a
 * private repository lacks write:repository first), and public-only refuses only what the token's
 * account could otherwise read (a stranger's public-only token still finds nothing: 404).
 */
const HTTP: ReadonlyArray<
  readonly [credential: HttpName, publicClone: Cell, publicPush: Cell, privateClone: Cell, privatePush: Cell]
> = [
  ["anonymous", OK, ASK, ASK, ASK],
  ["owner password", OK, OK, OK, OK],
  ["wrong password", ASK, ASK, ASK, ASK],
  ["owner token all", OK, OK, OK, OK],
  ["owner token read:repository", OK, NO_WRITE_SCOPE, OK, NO_WRITE_SCOPE],
  ["owner token write:repository", OK, OK, OK, OK],
  ["owner token public-only,write:repository", OK, OK, PUBLIC_ONLY, PUBLIC_ONLY],
  ["owner token public-only,read:repository", OK, NO_WRITE_SCOPE, PUBLIC_ONLY, NO_WRITE_SCOPE],
  ["owner token read:user", NO_READ_SCOPE, NO_WRITE_SCOPE, NO_READ_SCOPE, NO_WRITE_SCOPE],
  ["unknown token", ASK, ASK, ASK, ASK],
  ["read collaborator password", OK, hooked("bob"), OK, hooked("bob")],
  ["read collaborator token write:repository", OK, hooked("bob"), OK, hooked("bob")],
  ["stranger password", OK, hooked("carol"), NOT_FOUND, NOT_FOUND],
  ["stranger token public-only,write:repository", OK, hooked("carol"), NOT_FOUND, NOT_FOUND],
  ["prohibited account token all", PROHIBITED, PROHIBITED, PROHIBITED, PROHIBITED],
  ["password of an account that must change it", CHANGE_PASSWORD, CHANGE_PASSWORD, CHANGE_PASSWORD, CHANGE_PASSWORD]
]

/** Git over SSH: a refusal is a non-zero exit with this message on stderr. Same columns. */
type SshCell = "ok" | { readonly message: string }
const DENIED_KEY = { message: "Permission denied (publickey)" } as const
const NO_ACCESS = { message: "does not exist, or you do not have access to it" } as const
const SSH: ReadonlyArray<
  readonly [credential: string, publicClone: SshCell, publicPush: SshCell, privateClone: SshCell, privatePush: SshCell]
> = [
  ["owner key", OK, OK, OK, OK],
  ["read collaborator key", OK, hooked("bob"), OK, hooked("bob")],
  ["stranger key", OK, hooked("carol"), NO_ACCESS, NO_ACCESS],
  ["unregistered key", DENIED_KEY, DENIED_KEY, DENIED_KEY, DENIED_KEY],
  ["prohibited account key", PROHIBITED, PROHIBITED, PROHIBITED, PROHIBITED],
  // Deploy keys are on the private repository only: they reach no other, not even a public one.
  ["read-only deploy key", NO_ACCESS, NO_ACCESS, OK, { message: "this deploy key is read-only" }],
  ["read-write deploy key", NO_ACCESS, NO_ACCESS, OK, OK]
]

const REPOS: Record<Visibility, string> = { public: "alice/pub", private: "alice/priv" }
const COLUMNS: ReadonlyArray<readonly [Visibility, Op]> = [
  ["public", "clone"],
  ["public", "push"],
  ["private", "clone"],
  ["private", "push"]
]

let hearth: Hearth
let sshPort: number
const dir = mkdtempSync(join(tmpdir(), "hearth-git-access-"))

/** The tokens made in beforeAll, by row. */
const tokens = new Map<HttpName, string>()
const sshKeys = new Map<string, TestKey>()
/** A clone of each repository (made by the owner), where the commits each push cell sends are made. */
const workdirs = {} as Record<Visibility, string>
const barePaths = {} as Record<Visibility, string>

const gitUrl = (repo: string, user?: string, secret?: string) => {
  const url = new URL(`${hearth.base}/${repo}.git`)
  if (user !== undefined) {
    url.username = user
    url.password = secret ?? ""
  }
  return url.toString()
}

/** Every ref of the repository on disk: what a refused push must leave as it was. */
const refsOf = (visibility: Visibility) =>
  gitIn(barePaths[visibility], ["for-each-ref", "--format=%(refname) %(objectname)"])

let cells = 0
/** A new commit on top of the repository's main (one git process), to be pushed to a branch of its own. */
const newCommit = async (visibility: Visibility) => {
  const branch = `cell-${++cells}`
  const sha = await gitIn(workdirs[visibility], [
    "commit-tree",
    "-p",
    "origin/main",
    "-m",
    `pushed by ${branch}`,
    "origin/main^{tree}"
  ])
  return { branch, sha }
}

/**
 * Runs one operation with the real git client: a shallow clone into a new directory, or a push of a
 * new commit to a new branch (so that cells do not depend on each other's pushes). Returns git's outcome and, for a push, the commit and branch.
 */
const runGit = async (
  op: Op,
  visibility: Visibility,
  url: string,
  options: { readonly config?: ReadonlyArray<string>; readonly env?: Record<string, string> } = {}
) => {
  const config = options.config ?? []
  if (op === "clone") {
    const target = join(dir, `clone-${++cells}`)
    const ran = await gitRun(dir, [...config, "clone", "-q", "--depth", "1", url, target], options.env)
    return { ran, cloned: existsSync(join(target, "README.md")) }
  }
  const commit = await newCommit(visibility)
  const ran = await gitRun(
    workdirs[visibility],
    [...config, "push", "-q", url, `${commit.sha}:refs/heads/${commit.branch}`],
    options.env
  )
  return { ran, commit }
}

/** Asserts git's outcome for a cell, and for a push what the repository holds afterwards. */
const expectOutcome = async (
  op: Op,
  visibility: Visibility,
  expected: "ok" | { readonly message: string },
  run: () => ReturnType<typeof runGit>,
  refusal: (stderr: string) => void
) => {
  const before = op === "push" ? await refsOf(visibility) : undefined
  const outcome = await run()
  if (expected === "ok") {
    expect(outcome.ran.code, outcome.ran.stderr).toBe(0)
    if (op === "clone") expect(outcome.cloned).toBe(true)
    else expect(await refsOf(visibility)).toContain(`refs/heads/${outcome.commit!.branch} ${outcome.commit!.sha}`)
    return
  }
  expect(outcome.ran.code, outcome.ran.stderr).not.toBe(0)
  refusal(outcome.ran.stderr)
  if (op === "clone") expect(outcome.cloned).toBe(false)
  // A refused push changed no ref (nor added one).
  else expect(await refsOf(visibility)).toBe(before)
}

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    }
  })
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["alice", "bob", "carol", "dave", "frank"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "erin", mustChangePassword: true })
  for (const [visibility, repo] of Object.entries(REPOS) as Array<[Visibility, string]>) {
    const name = repo.split("/")[1]!
    expect(
      (
        await request(hearth, "POST", "/user/repos", basic("alice"), {
          name,
          auto_init: true,
          private: visibility === "private"
        })
      ).status
    ).toBe(201)
    expect(
      (await request(hearth, "PUT", `/repos/${repo}/collaborators/bob`, basic("alice"), { permission: "read" })).status
    ).toBe(204)
    workdirs[visibility] = join(dir, `work-${visibility}`)
    await gitIn(dir, ["clone", "-q", gitUrl(repo, "alice", "password123"), workdirs[visibility]])
    barePaths[visibility] = await hearth.run(
      Effect.gen(function* () {
        const repos = yield* ReposService
        const found = yield* repos.find("alice", name)
        return repos.pathOf(found.owner, found.repo)
      })
    )
  }

  for (const [name, credential] of Object.entries(HTTP_CREDENTIALS) as Array<[HttpName, HttpCredential]>) {
    if (credential.kind === "token")
      tokens.set(name, credential.token ?? (await createToken(hearth, credential.user, credential.scopes)))
  }

  const userKey = async (user: string) => {
    const key = keygen(dir, user)
    expect(
      (await request(hearth, "POST", "/user/keys", basic(user), { title: `${user}-key`, key: key.pub })).status
    ).toBe(201)
    return key
  }
  const deployKey = async (readOnly: boolean) => {
    const key = keygen(dir, readOnly ? "deploy-ro" : "deploy-rw")
    const title = readOnly ? "ro" : "rw"
    const res = await request(hearth, "POST", `/repos/${REPOS.private}/keys`, basic("alice"), {
      title,
      key: key.pub,
      read_only: readOnly
    })
    expect(res.status).toBe(201)
    return key
  }
  sshKeys.set("owner key", await userKey("alice"))
  sshKeys.set("read collaborator key", await userKey("bob"))
  sshKeys.set("stranger key", await userKey("carol"))
  sshKeys.set("unregistered key", keygen(dir, "nobody"))
  sshKeys.set("prohibited account key", await userKey("frank"))
  sshKeys.set("read-only deploy key", await deployKey(true))
  sshKeys.set("read-write deploy key", await deployKey(false))

  // frank's token and key were made while he could sign in.
  const prohibit = await request(hearth, "PATCH", "/admin/users/frank", basic("root"), {
    login_name: "frank",
    source_id: 0,
    prohibit_login: true
  })
  expect(prohibit.status).toBe(200)
}, 120_000)

afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

const cellsOf = <N extends string, C>(table: ReadonlyArray<readonly [N, C, C, C, C]>) =>
  table.flatMap(([credential, ...row]) =>
    COLUMNS.map(([visibility, op], i) => ({ credential, visibility, op, expected: row[i]! }))
  )

/** Tokens are sent both as git sends them (Basic password) and as `Authorization: token X`. */
const httpCells = cellsOf(HTTP).flatMap((cell) =>
  (HTTP_CREDENTIALS[cell.credential].kind === "token" ? (["basic", "header"] as const) : (["basic"] as const)).map(
    (form) => ({ ...cell, form })
  )
)

describe("git over HTTP", () => {
  it.each(httpCells)(
    "$credential ($form): $op $visibility",
    async ({ credential: name, visibility, op, expected, form }) => {
      const credential: HttpCredential = HTTP_CREDENTIALS[name]
      const repo = REPOS[visibility]
      const user = credential.kind === "none" ? undefined : credential.user
      const secret =
        credential.kind === "none"
          ? undefined
          : credential.kind === "password"
            ? (credential.password ?? "password123")
            : tokens.get(name)!
      const authorization =
        user === undefined || secret === undefined
          ? undefined
          : form === "basic"
            ? basic(user, secret)
            : `token ${secret}`

      // What git's first request is answered.
      const service = op === "clone" ? "git-upload-pack" : "git-receive-pack"
      const advertised = await fetch(`${hearth.base}/${repo}.git/info/refs?service=${service}`, {
        headers: authorization === undefined ? {} : { authorization }
      })
      const body = await advertised.text()
      if (expected === "ok") {
        expect(advertised.status, body).toBe(200)
      } else {
        expect(advertised.status, body).toBe(expected.status)
        if (expected.status !== 200) expect(body).toContain(expected.message)
        if (expected.status === 401) expect(advertised.headers.get("www-authenticate")).toMatch(/^Basic realm=/)
      }

      // What the git client does with it. git sends the credentials in the URL only once asked
      // (401): a public repository is cloned without them, so a refusal of them never reaches git.
      const url = form === "header" ? gitUrl(repo) : gitUrl(repo, user, secret)
      const config = form === "header" ? ["-c", `http.extraHeader=Authorization: ${authorization}`] : []
      const asked = form === "header" || visibility === "private" || op === "push"
      const gitExpected = asked ? expected : OK
      await expectOutcome(
        op,
        visibility,
        gitExpected,
        () => runGit(op, visibility, url, { config }),
        (stderr) => {
          if (gitExpected === "ok") return
          if (gitExpected.status === 401) expect(stderr).toMatch(/Authentication failed|could not read Username/)
          else if (gitExpected.status === 404) expect(stderr).toContain("not found")
          else if (gitExpected.status === 200) {
            expect(stderr).toContain(`remote: ${gitExpected.message}`)
            expect(stderr).toContain("pre-receive hook declined")
          } else {
            // git prints a text/plain refusal as "remote: …" before its own line.
            expect(stderr).toContain(`remote: ${gitExpected.message}`)
            expect(stderr).toContain("403")
          }
        }
      )
    }
  )
})

describe("git over SSH", () => {
  it.each(cellsOf(SSH))("$credential: $op $visibility", async ({ credential, visibility, op, expected }) => {
    const key = sshKeys.get(credential)!
    const env = { GIT_SSH_COMMAND: gitSshCommand(key.file, sshPort) }
    await expectOutcome(
      op,
      visibility,
      expected,
      () => runGit(op, visibility, sshUrl(sshPort, `${REPOS[visibility]}.git`), { env }),
      (stderr) => {
        if (expected !== "ok") expect(stderr).toContain(expected.message)
      }
    )
  })
})
