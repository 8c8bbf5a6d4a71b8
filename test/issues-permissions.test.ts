// The permission table of CONTRACT-ISSUES §1.3 over real HTTP: anonymous, reader, poster (a
// reader who opened the issue), writer, admin and site admin, on a public and a private
// repository (where whoever cannot see it gets 404), plus the issues unit switched off (404).
// Each action runs on fresh fixtures so that one row never depends on another.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

const CALLERS = ["anonymous", "stranger", "reader", "poster", "writer", "maintainer", "siteadmin"] as const
type CallerName = (typeof CALLERS)[number]
const auth = (caller: CallerName) => (caller === "anonymous" ? undefined : basic(caller))

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(
    ["owner", "stranger", "reader", "poster", "writer", "maintainer"].map((username) =>
      createUser(hearth, { username })
    )
  )
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  for (const [name, priv] of [
    ["public", false],
    ["private", true]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name, private: priv })).status).toBe(201)
    for (const [who, permission] of [
      ["reader", "read"],
      ["poster", "read"],
      ["writer", "write"],
      ["maintainer", "admin"]
    ] as const) {
      const put = await request(hearth, "PUT", `/repos/owner/${name}/collaborators/${who}`, basic("owner"), {
        permission
      })
      expect(put.status).toBe(204)
    }
  }
}, 60_000)
afterAll(() => hearth?.close())

/** A fresh issue opened by `poster` (and a comment of the poster's on it). */
const fixture = async (repo: string) => {
  const issue = await json(
    await request(hearth, "POST", `/repos/owner/${repo}/issues`, basic("poster"), { title: "t" })
  )
  const comment = await json(
    await request(hearth, "POST", `/repos/owner/${repo}/issues/${issue.number}/comments`, basic("poster"), {
      body: "c"
    })
  )
  const label = await json(
    await request(hearth, "POST", `/repos/owner/${repo}/labels`, basic("owner"), {
      name: `l${issue.number}`,
      color: "123456"
    })
  )
  return {
    n: issue.number as number,
    comment: comment.id as number,
    label: label.id as number,
    created: issue.created_at
  }
}

type Fixture = Awaited<ReturnType<typeof fixture>>
const ACTIONS: ReadonlyArray<{
  readonly name: string
  readonly call: (repo: string, f: Fixture, who: string | undefined) => Promise<Response>
  readonly public: ReadonlyArray<number>
  readonly private: ReadonlyArray<number>
}> = [
  {
    name: "read an issue",
    call: (repo, f, who) => request(hearth, "GET", `/repos/owner/${repo}/issues/${f.n}`, who),
    public: [200, 200, 200, 200, 200, 200, 200],
    private: [404, 404, 200, 200, 200, 200, 200]
  },
  {
    name: "open an issue",
    call: (repo, _f, who) => request(hearth, "POST", `/repos/owner/${repo}/issues`, who, { title: "x" }),
    public: [401, 201, 201, 201, 201, 201, 201],
    private: [401, 404, 201, 201, 201, 201, 201]
  },
  {
    name: "edit the title (poster or writer)",
    call: (repo, f, who) => request(hearth, "PATCH", `/repos/owner/${repo}/issues/${f.n}`, who, { title: "y" }),
    public: [401, 403, 403, 201, 201, 201, 201],
    private: [401, 404, 403, 201, 201, 201, 201]
  },
  {
    name: "comment",
    call: (repo, f, who) => request(hearth, "POST", `/repos/owner/${repo}/issues/${f.n}/comments`, who, { body: "x" }),
    public: [401, 201, 201, 201, 201, 201, 201],
    private: [401, 404, 201, 201, 201, 201, 201]
  },
  {
    name: "edit the poster's comment (its poster or a writer)",
    call: (repo, f, who) =>
      request(hearth, "PATCH", `/repos/owner/${repo}/issues/comments/${f.comment}`, who, { body: "z" }),
    public: [401, 403, 403, 200, 200, 200, 200],
    private: [401, 404, 403, 200, 200, 200, 200]
  },
  {
    name: "add a label (writers)",
    call: (repo, f, who) =>
      request(hearth, "POST", `/repos/owner/${repo}/issues/${f.n}/labels`, who, { labels: [f.label] }),
    public: [401, 403, 403, 403, 200, 200, 200],
    private: [401, 404, 403, 403, 200, 200, 200]
  },
  {
    name: "create a milestone (writers)",
    call: (repo, _f, who) => request(hearth, "POST", `/repos/owner/${repo}/milestones`, who, { title: "m" }),
    public: [401, 403, 403, 403, 201, 201, 201],
    private: [401, 404, 403, 403, 201, 201, 201]
  },
  {
    name: "set updated_at (admins)",
    call: (repo, f, who) =>
      request(hearth, "PATCH", `/repos/owner/${repo}/issues/${f.n}`, who, { body: "b", updated_at: f.created }),
    public: [401, 403, 403, 403, 403, 201, 201],
    private: [401, 404, 403, 403, 403, 201, 201]
  },
  {
    name: "delete an issue (admins)",
    call: (repo, f, who) => request(hearth, "DELETE", `/repos/owner/${repo}/issues/${f.n}`, who),
    public: [401, 403, 403, 403, 403, 204, 204],
    private: [401, 404, 403, 403, 403, 204, 204]
  }
]

describe("the §1.3 permission table", () => {
  for (const action of ACTIONS) {
    it(action.name, async () => {
      for (const repo of ["public", "private"] as const) {
        const got: Array<number> = []
        for (const caller of CALLERS) {
          const f = await fixture(repo)
          const res = await action.call(repo, f, auth(caller))
          got.push(res.status)
          if (res.status === 404) expect(await res.text()).toBe("")
          else if (res.status >= 400) expect(typeof (await json(res)).message).toBe("string")
        }
        expect(got, `${action.name} on ${repo}`).toEqual(action[repo])
      }
    })
  }

  it("a poster who does not write has the milestone, assignees and due date silently ignored", async () => {
    const f = await fixture("public")
    const m = await json(
      await request(hearth, "POST", "/repos/owner/public/milestones", basic("owner"), { title: "p" })
    )
    const res = await request(hearth, "PATCH", `/repos/owner/public/issues/${f.n}`, basic("poster"), {
      milestone: m.id,
      assignees: ["writer"],
      due_date: "2030-01-01T00:00:00Z",
      body: "mine"
    })
    expect(res.status).toBe(201)
    expect(await json(res)).toMatchObject({ body: "mine", milestone: null, assignees: null, due_date: null })
  })

  it("on a locked issue only writers and site admins may comment; the lock does not stop comment edits", async () => {
    // Forgejo's API has no lock route: the lock is set in the database, as the web interface would.
    const f = await fixture("public")
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE issues SET is_locked = true WHERE index = ${f.n}
          AND repo_id = (SELECT id FROM repositories WHERE name = 'public')`
      })
    )
    const path = `/repos/owner/public/issues/${f.n}/comments`
    const refused = await request(hearth, "POST", path, basic("reader"), { body: "x" })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("You cannot comment on a locked issue.")
    expect((await request(hearth, "POST", path, basic("poster"), { body: "x" })).status).toBe(403)
    expect((await request(hearth, "POST", path, basic("writer"), { body: "x" })).status).toBe(201)
    expect((await request(hearth, "POST", path, basic("siteadmin"), { body: "x" })).status).toBe(201)
    const edit = await request(hearth, "PATCH", `/repos/owner/public/issues/comments/${f.comment}`, basic("poster"), {
      body: "still mine"
    })
    expect(edit.status).toBe(200)
    expect((await json(await request(hearth, "GET", `/repos/owner/public/issues/${f.n}`))).is_locked).toBe(true)
  })

  it("tokens: read:issue reads but does not write (403), public-only tokens never see a private repository", async () => {
    const f = await fixture("public")
    const read = `token ${await createToken(hearth, "writer", ["read:issue", "read:repository"])}`
    expect((await request(hearth, "GET", `/repos/owner/public/issues/${f.n}`, read)).status).toBe(200)
    expect((await request(hearth, "POST", "/repos/owner/public/issues", read, { title: "x" })).status).toBe(403)
    const publicOnly = `token ${await createToken(hearth, "owner", ["public-only", "write:issue", "read:repository"])}`
    expect((await request(hearth, "POST", "/repos/owner/public/issues", publicOnly, { title: "x" })).status).toBe(201)
    expect((await request(hearth, "GET", "/repos/owner/private/issues", publicOnly)).status).not.toBe(200)
    const searched = await json(await request(hearth, "GET", "/repos/issues/search?limit=50&state=all", publicOnly))
    expect(searched.every((i: any) => i.repository.name === "public")).toBe(true)
  })

  it("everything under /issues is 404 while the issues unit is off", async () => {
    const f = await fixture("public")
    expect((await request(hearth, "PATCH", "/repos/owner/public", basic("owner"), { has_issues: false })).status).toBe(
      200
    )
    for (const [method, path] of [
      ["GET", `/issues/${f.n}`],
      ["GET", "/issues"],
      ["POST", "/issues"],
      ["GET", `/issues/${f.n}/comments`],
      ["GET", `/issues/comments/${f.comment}`],
      ["GET", `/issues/${f.n}/timeline`]
    ] as const) {
      const res = await request(
        hearth,
        method,
        `/repos/owner/public${path}`,
        basic("owner"),
        method === "POST" ? { title: "x" } : undefined
      )
      expect(res.status, `${method} ${path}`).toBe(404)
    }
    // Labels and milestones are read without a unit check.
    expect((await request(hearth, "GET", "/repos/owner/public/labels")).status).toBe(200)
    expect((await request(hearth, "PATCH", "/repos/owner/public", basic("owner"), { has_issues: true })).status).toBe(
      200
    )
  })
})
