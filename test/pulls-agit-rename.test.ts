// AGit pull requests after their pusher renamed their account (issue 19; Forgejo's
// services/agit `UserNameChanged`, which rewrites the open AGit pull requests' head branch
// `{old}/{topic}` to `{new}/{topic}` at the rename): with the real git client over HTTP, the
// renamed user's next `git push origin HEAD:refs/for/main -o topic=x` updates the same pull request
// instead of opening a second one, its head branch then shows the new name (the merge's default
// message names it), and an account that later takes the old name opens its own pull request
// rather than reaching the renamed user's. The rename is the users repository's write (Hearth has
// no rename route yet).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { UsersRepo } from "../src/users/Repo.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string

const httpUrl = (user: string) => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}
const commit = async (dir: string, file: string, message: string) => {
  writeFileSync(join(dir, file), `${message}\n`)
  await gitIn(dir, ["add", file])
  await gitIn(dir, ["commit", "-q", "-m", message])
  return gitIn(dir, ["rev-parse", "HEAD"])
}
const pushFor = async (dir: string, topic: string) => {
  const pushed = await gitRun(dir, ["push", "origin", "HEAD:refs/for/main", "-o", `topic=${topic}`])
  expect(pushed.code, pushed.stderr).toBe(0)
  return pushed.stderr
}
const pulls = async () =>
  (await json(await request(hearth, "GET", "/repos/alice/app/pulls?state=all", basic("alice")))) as Array<{
    number: number
    user: { login: string }
    head: { label: string; ref: string; sha: string }
  }>

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-agit-rename-"))
  for (const username of ["alice", "carol"]) await createUser(hearth, { username })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

it("a renamed pusher's next push of the same topic updates the same pull request, under the new name", async () => {
  const dir = join(work, "carol")
  await gitIn(work, ["clone", "-q", httpUrl("carol"), dir])
  await commit(dir, "x.txt", "Topic x")
  expect(await pushFor(dir, "x")).toContain(`${hearth.base}/alice/app/pulls/1`)

  // carol becomes caroline.
  await hearth.run(
    Effect.gen(function* () {
      const users = yield* UsersRepo
      const carol = Option.getOrThrow(yield* users.findByName("carol"))
      yield* users.update(carol.id, { name: "caroline" })
    })
  )
  await gitIn(dir, ["remote", "set-url", "origin", httpUrl("caroline")])
  const second = await commit(dir, "x2.txt", "More of x")
  expect(await pushFor(dir, "x")).toContain(`${hearth.base}/alice/app/pulls/1`)
  const listed = await pulls()
  expect(listed).toHaveLength(1)
  expect(listed[0]).toMatchObject({
    number: 1,
    user: { login: "caroline" },
    head: { label: "", ref: "refs/pull/1/head", sha: second }
  })

  // Someone now called carol pushes the same topic: a pull request of their own.
  await createUser(hearth, { username: "carol", email: "new-carol@example.com" })
  const other = join(work, "new-carol")
  await gitIn(work, ["clone", "-q", httpUrl("carol"), other])
  await commit(other, "y.txt", "The new carol's x")
  expect(await pushFor(other, "x")).toContain(`${hearth.base}/alice/app/pulls/2`)
  expect((await pulls()).map((p) => [p.number, p.user.login, p.head.sha === second])).toEqual([
    [2, "carol", false],
    [1, "caroline", true]
  ])

  // The head branch the merge names is the new name's.
  const merged = await request(hearth, "POST", "/repos/alice/app/pulls/1/merge", basic("alice"), { Do: "merge" })
  expect(merged.status, await merged.clone().text()).toBe(200)
  const bare = join(hearth.settings.repository.ROOT, "alice/app.git")
  expect(await gitIn(bare, ["log", "-1", "--format=%s", "main"])).toBe(
    "Merge pull request 'Topic x' (#1) from caroline/x into main"
  )
}, 180_000)
