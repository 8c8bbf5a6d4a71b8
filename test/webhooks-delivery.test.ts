// Webhook deliveries to a real receiver on 127.0.0.1 (src/webhooks; CONTRACT-WEBHOOKS §1.7–1.15):
// pushes over real git, issues and comments, repository and fork events; Forgejo's headers and
// signatures (verified here with the secret); branch filters; the host policy (a private address
// refused, also behind a redirect); retries on 5xx with the same delivery id; a receiver that hangs
// or answers 5 MiB bounded; history, redelivery and test deliveries.
import { createHmac } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { createServer as createHttpsServer } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, remoteAs } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"
import { selfSigned } from "./support/tls.ts"

let hearth: Hearth
let receiver: Receiver
let work: string
// A forward proxy for [webhook] PROXY_URL: it records the absolute request target and answers itself.
const proxied: Array<{ target: string; host: string | undefined }> = []
let proxy: Server
const call = (user: string, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, basic(user), body)
const SECRET = "top-secret"

const addHook = async (
  repo: string,
  path: string,
  extra: Record<string, unknown> = {},
  config: Record<string, string> = {}
) => {
  const res = await call("alice", "POST", `/repos/${repo}/hooks`, {
    type: "forgejo",
    config: { url: receiver.url(path), content_type: "json", secret: SECRET, ...config },
    events: ["push", "create", "delete", "issues", "issue_comment", "repository", "fork"],
    active: true,
    ...extra
  })
  expect(res.status).toBe(201)
  return (await json(res)) as { id: number }
}

const deliveries = async (repo: string, hookId: number) =>
  (await json(await call("alice", "GET", `/repos/${repo}/hooks/${hookId}/deliveries?limit=50`))) as Array<any>

/** Waits (bounded) until the hook's newest delivery has settled as `success`. */
const settled = async (repo: string, hookId: number, count: number, success: boolean) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const list = await deliveries(repo, hookId)
    const jobs = list.filter((d) => d.delivered && d.success === success)
    if (jobs.length >= count) return list
    if (Date.now() > deadline)
      throw new Error(
        `deliveries did not settle: ${JSON.stringify(list.map((d) => [d.delivered, d.success, d.attempts]))}`
      )
    await new Promise((r) => setTimeout(r, 100))
  }
}

const git = (args: ReadonlyArray<string>, cwd = join(work, "code")) => gitIn(cwd, args)
/** Whether a delivery's stored attempt record holds the request body itself. */
const storesBody = (taskId: number) =>
  hearth.run(
    Effect.flatMap(Effect.service(SqlClient), (sql) =>
      Effect.map(Effect.orDie(sql`SELECT request ? 'body' AS stored FROM hook_tasks WHERE id = ${taskId}`), (rows) =>
        Boolean(rows[0]!.stored)
      )
    )
  )
const commit = async (file: string, message: string) => {
  writeFileSync(join(work, "code", file), `${message}\n`)
  await git(["add", file])
  await git(["commit", "-q", "-m", message])
  return git(["rev-parse", "HEAD"])
}

const verify = (r: { headers: Record<string, unknown>; body: string }, signed = r.body) => {
  const sha256 = createHmac("sha256", SECRET).update(signed).digest("hex")
  const sha1 = createHmac("sha1", SECRET).update(signed).digest("hex")
  expect(r.headers["x-forgejo-signature"]).toBe(sha256)
  expect(r.headers["x-gitea-signature"]).toBe(sha256)
  expect(r.headers["x-gogs-signature"]).toBe(sha256)
  expect(r.headers["x-hub-signature-256"]).toBe(`sha256=${sha256}`)
  expect(r.headers["x-hub-signature"]).toBe(`sha1=${sha1}`)
}

beforeAll(async () => {
  receiver = await startReceiver()
  proxy = createServer((req, res) => {
    proxied.push({ target: req.url ?? "", host: req.headers.host })
    req.resume()
    req.on("end", () => res.writeHead(200).end("via proxy"))
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  hearth = await startHearth({
    webhook: {
      ALLOWED_HOST_LIST: "loopback",
      MAX_RETRIES: "2",
      RETRY_DELAY: "1s",
      DELIVER_TIMEOUT: "2",
      // Small, so that one test can push more commits than a payload lists.
      PAYLOAD_COMMIT_LIMIT: "3",
      // Only receivers named `localhost` go through the proxy; the other tests use 127.0.0.1.
      PROXY_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      PROXY_HOSTS: "localhost"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-webhooks-"))
  for (const username of ["alice", "bob"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })
  expect((await call("alice", "POST", "/user/repos", { name: "code", auto_init: true })).status).toBe(201)
  await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "alice", "alice/code"), "code"])
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
  proxy?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("push, create and delete", () => {
  it("a push delivers Forgejo's payload with its headers and signatures", async () => {
    const hook = await addHook("alice/code", "/ok/push")
    const before = await git(["rev-parse", "HEAD"])
    const first = await commit("a.txt", "first change")
    const second = await commit("b.txt", "second change\n\nwith a body")
    await git(["push", "-q", "origin", "HEAD:main"])
    const [got] = await receiver.wait("/ok/push")
    expect(got!.method).toBe("POST")
    expect(got!.headers["content-type"]).toBe("application/json")
    for (const vendor of ["forgejo", "gitea", "gogs", "github"]) {
      expect(got!.headers[`x-${vendor}-event`]).toBe("push")
      expect(got!.headers[`x-${vendor}-event-type`]).toBe("push")
      expect(got!.headers[`x-${vendor}-delivery`]).toMatch(/^[0-9a-f-]{36}$/)
    }
    verify(got as any)
    const payload = JSON.parse(got!.body)
    expect(payload).toMatchObject({
      ref: "refs/heads/main",
      before,
      after: second,
      compare_url: `${hearth.base}/alice/code/compare/${before}...${second}`,
      total_commits: 2,
      repository: { full_name: "alice/code", name: "code", owner: { login: "alice" } },
      pusher: { login: "alice" },
      sender: { login: "alice" }
    })
    expect(payload.commits.map((c: any) => c.id)).toEqual([second, first])
    expect(payload.head_commit.id).toBe(second)
    expect(payload.commits[0]).toMatchObject({
      message: "second change\n\nwith a body\n",
      url: `${hearth.base}/alice/code/commit/${second}`,
      author: { name: "T", email: "t@example.com", username: "" },
      added: ["b.txt"],
      removed: [],
      modified: []
    })
    // The history has what was sent and answered; the secret never.
    const [delivery] = await settled("alice/code", hook.id, 1, true)
    expect(delivery).toMatchObject({
      event: "push",
      event_type: "push",
      uuid: got!.headers["x-forgejo-delivery"],
      delivered: true,
      success: true,
      attempts: 1,
      request: { url: receiver.url("/ok/push"), http_method: "POST", body: got!.body },
      response: { status: 200, body: "thanks" }
    })
    expect(delivery.response.headers["x-receiver"]).toBe("yes")
    expect(JSON.stringify(delivery)).not.toContain(SECRET)
    // The body sent was the task's payload: the attempt's record does not store it a second time.
    expect(await storesBody(delivery.id)).toBe(false)
    expect((await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)).status).toBe(204)
  })

  it("a push of more commits than PAYLOAD_COMMIT_LIMIT lists the newest and counts them all", async () => {
    const hook = await addHook("alice/code", "/ok/limit")
    const shas = []
    for (const n of [1, 2, 3, 4]) shas.push(await commit(`limit${n}.txt`, `limit ${n}`))
    await git(["push", "-q", "origin", "HEAD:main"])
    const [got] = await receiver.wait("/ok/limit")
    const payload = JSON.parse(got!.body)
    expect(payload.total_commits).toBe(4)
    expect(payload.commits.map((c: any) => c.id)).toEqual([shas[3], shas[2], shas[1]])
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
  })

  it("a push's payload and its activity feed action agree on the commits and their count, also for a new branch", async () => {
    // One reader (src/git/PushedCommits.ts) serves both; a new branch counts the commits it lists.
    expect((await call("alice", "POST", "/user/repos", { name: "counted", auto_init: true })).status).toBe(201)
    const remote = remoteAs(hearth.base, "alice", "alice/counted")
    await gitIn(work, ["clone", "-q", remote, "counted"])
    const cwd = join(work, "counted")
    const commitIn = async (n: number) => {
      writeFileSync(join(cwd, `n${n}.txt`), `${n}\n`)
      await git(["add", `n${n}.txt`], cwd)
      await git(["commit", "-q", "-m", `counted ${n}`], cwd)
      return git(["rev-parse", "HEAD"], cwd)
    }
    const hook = await addHook("alice/counted", "/ok/counted", { events: ["push"] })
    const feedOf = async (ref: string, after: string) => {
      const deadline = Date.now() + 30_000
      for (;;) {
        const list = (await json(
          await call("alice", "GET", "/repos/alice/counted/activities/feeds?limit=50")
        )) as Array<any>
        const found = list.find((a) => a.op_type === "commit_repo" && a.ref_name === ref && a.content.includes(after))
        if (found !== undefined) return JSON.parse(found.content)
        if (Date.now() > deadline) throw new Error(`no commit_repo action for ${ref}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    // A new branch whose history is the initial commit and one more: 2 commits, not the cap.
    const first = await commitIn(1)
    await git(["push", "-q", "origin", "HEAD:refs/heads/fresh"], cwd)
    const [created] = await receiver.wait("/ok/counted")
    const fresh = JSON.parse(created!.body)
    const freshFeed = await feedOf("refs/heads/fresh", first)
    expect(fresh.total_commits).toBe(2)
    expect(freshFeed.Len).toBe(2)
    expect(fresh.commits.map((c: any) => c.id)).toEqual(freshFeed.Commits.map((c: any) => c.Sha1))
    // An existing branch: 4 commits counted by both; the payload lists PAYLOAD_COMMIT_LIMIT (3) of
    // them, the feed up to 5, the same newest first and with the same messages.
    const shas = []
    for (const n of [2, 3, 4, 5]) shas.push(await commitIn(n))
    await git(["push", "-q", "origin", "HEAD:refs/heads/fresh"], cwd)
    const got = await receiver.wait("/ok/counted", 2)
    const pushed = JSON.parse(got[1]!.body)
    const feed = await feedOf("refs/heads/fresh", shas[3]!)
    expect(pushed.total_commits).toBe(4)
    expect(feed.Len).toBe(4)
    expect(feed.Commits.map((c: any) => c.Sha1)).toEqual([...shas].reverse())
    expect(pushed.commits.map((c: any) => [c.id, c.message])).toEqual(
      feed.Commits.slice(0, 3).map((c: any) => [c.Sha1, c.Message])
    )
    await call("alice", "DELETE", `/repos/alice/counted/hooks/${hook.id}`)
  })

  it("a new branch fires create then push; deleting it fires delete; the branch filter applies", async () => {
    const all = await addHook("alice/code", "/ok/refs")
    const filtered = await addHook("alice/code", "/ok/filtered", { branch_filter: "{main,feature*}" })
    const head = await git(["rev-parse", "HEAD"])
    await git(["push", "-q", "origin", "HEAD:refs/heads/feature/7791", "HEAD:refs/heads/fix_weird_bug"])
    await receiver.wait("/ok/refs", 4)
    await receiver.wait("/ok/filtered", 2)
    await git(["push", "-q", "origin", ":refs/heads/feature/7791", ":refs/heads/fix_weird_bug"])
    const got = await receiver.wait("/ok/refs", 6)
    const seen = got.map((r) => [r.headers["x-forgejo-event"], JSON.parse(r.body).ref])
    for (const ref of ["refs/heads/feature/7791", "refs/heads/fix_weird_bug"]) {
      expect(seen.filter(([, r]) => r === ref).map(([e]) => e)).toEqual(["create", "push", "delete"])
    }
    const created = JSON.parse(got.find((r) => r.headers["x-forgejo-event"] === "create")!.body)
    expect(created).toMatchObject({ sha: head, ref_type: "branch", repository: { full_name: "alice/code" } })
    const deleted = JSON.parse(got.find((r) => r.headers["x-forgejo-event"] === "delete")!.body)
    expect(deleted).toMatchObject({ ref_type: "branch", pusher_type: "user", sender: { login: "alice" } })
    const filteredGot = await receiver.wait("/ok/filtered", 3)
    // Only feature/7791 passes {main,feature*}: create, push, delete.
    expect(filteredGot.map((r) => JSON.parse(r.body).ref)).toEqual([
      "refs/heads/feature/7791",
      "refs/heads/feature/7791",
      "refs/heads/feature/7791"
    ])
    for (const id of [all.id, filtered.id]) await call("alice", "DELETE", `/repos/alice/code/hooks/${id}`)
  })

  it("a gitea hook with content type form sends payload=… signed over the JSON", async () => {
    const hook = await addHook("alice/code", "/ok/form", { type: "gitea" }, { content_type: "form" })
    await git(["push", "-q", "origin", "HEAD:refs/heads/formed"])
    const got = await receiver.wait("/ok/form", 2)
    const create = got.find((r) => r.headers["x-gitea-event"] === "create")!
    expect(create.headers["content-type"]).toBe("application/x-www-form-urlencoded")
    const json = new URLSearchParams(create.body).get("payload")!
    verify(create as any, json)
    // Forgejo's gitea quirk: create/delete payloads compact with the short ref.
    expect(JSON.parse(json).ref).toBe("formed")
    expect(json).not.toContain("\n")
    // A body other than the payload (the form) is recorded as sent.
    const history = await settled("alice/code", hook.id, 2, true)
    const recorded = history.find((d) => d.uuid === create.headers["x-gitea-delivery"])
    expect(recorded.request.body).toBe(create.body)
    expect(await storesBody(recorded.id)).toBe(true)
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
  })
})

describe("other events", () => {
  it("issues and issue comments", async () => {
    const hook = await addHook("alice/code", "/ok/issues", { events: ["issues", "issue_comment"] })
    const issue = await json(await call("bob", "POST", "/repos/alice/code/issues", { title: "broken", body: "it is" }))
    const [opened] = await receiver.wait("/ok/issues")
    expect(opened!.headers["x-forgejo-event"]).toBe("issues")
    expect(JSON.parse(opened!.body)).toMatchObject({
      action: "opened",
      number: issue.number,
      issue: { number: issue.number, title: "broken", body: "it is" },
      repository: { full_name: "alice/code" },
      sender: { login: "bob" }
    })
    await call("alice", "POST", `/repos/alice/code/issues/${issue.number}/comments`, { body: "looking" })
    const got = await receiver.wait("/ok/issues", 2)
    expect(got[1]!.headers["x-forgejo-event"]).toBe("issue_comment")
    expect(JSON.parse(got[1]!.body)).toMatchObject({
      action: "created",
      is_pull: false,
      issue: { number: issue.number },
      comment: { body: "looking" },
      sender: { login: "alice" }
    })
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
  })

  it("a user's hooks hear repository events of their repositories; a fork reaches the forked repository's hooks", async () => {
    const userHook = await json(
      await call("alice", "POST", "/user/hooks", {
        type: "forgejo",
        config: { url: receiver.url("/ok/user"), content_type: "json" },
        events: ["repository"],
        active: true
      })
    )
    expect((await call("alice", "POST", "/user/repos", { name: "another" })).status).toBe(201)
    const [created] = await receiver.wait("/ok/user")
    expect(created!.headers["x-forgejo-event"]).toBe("repository")
    expect(JSON.parse(created!.body)).toMatchObject({
      action: "created",
      repository: { full_name: "alice/another" },
      organization: { login: "alice" },
      sender: { login: "alice" }
    })
    expect((await call("alice", "DELETE", "/repos/alice/another")).status).toBe(204)
    const got = await receiver.wait("/ok/user", 2)
    expect(JSON.parse(got[1]!.body)).toMatchObject({ action: "deleted", repository: { full_name: "alice/another" } })

    const hook = await addHook("alice/code", "/ok/fork", { events: ["fork"] })
    expect((await call("bob", "POST", "/repos/alice/code/forks", {})).status).toBe(202)
    const [fork] = await receiver.wait("/ok/fork")
    expect(JSON.parse(fork!.body)).toMatchObject({
      forkee: { full_name: "alice/code" },
      repository: { full_name: "bob/code" },
      sender: { login: "bob" }
    })
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
    await call("alice", "DELETE", `/user/hooks/${userHook.id}`)
  })
})

describe("failures", () => {
  it("a 5xx is retried with the same delivery id until it succeeds", async () => {
    const hook = await addHook("alice/code", "/fail/2", { events: ["push"] })
    await commit("c.txt", "retry me")
    await git(["push", "-q", "origin", "HEAD:main"])
    const got = await receiver.wait("/fail/2", 3, 30_000)
    expect(new Set(got.map((r) => r.headers["x-forgejo-delivery"])).size).toBe(1)
    const [delivery] = await settled("alice/code", hook.id, 1, true)
    expect(delivery).toMatchObject({ attempts: 3, success: true, response: { status: 200 } })
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
  })

  it("a private address is refused by ALLOWED_HOST_LIST, also behind a redirect, and not retried", async () => {
    const direct = await call("alice", "POST", "/repos/alice/code/hooks", {
      type: "forgejo",
      config: { url: "http://10.255.255.1:9/hook", content_type: "json" },
      active: true
    })
    const redirected = await addHook("alice/code", `/redirect?to=${encodeURIComponent("http://10.255.255.1:9/x")}`, {
      events: ["push"]
    })
    const directId = (await json(direct)).id
    await commit("d.txt", "refused")
    await git(["push", "-q", "origin", "HEAD:main"])
    for (const id of [directId, redirected.id]) {
      const [delivery] = await settled("alice/code", id, 1, false)
      expect(delivery.attempts).toBe(1)
      expect(delivery.response.body).toContain(
        "webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting), deny '10.255.255.1'"
      )
    }
    expect(receiver.at("/redirect")).toHaveLength(1)
    for (const id of [directId, redirected.id]) await call("alice", "DELETE", `/repos/alice/code/hooks/${id}`)
  })

  it("a receiver that hangs times out; one that answers 5 MiB is cut off; both recorded as failed", async () => {
    const hang = await addHook("alice/code", "/hang", { events: ["push"] })
    const huge = await addHook("alice/code", "/huge", { events: ["push"] })
    await commit("e.txt", "slow receivers")
    await git(["push", "-q", "origin", "HEAD:main"])
    const [slow] = await settled("alice/code", hang.id, 1, false)
    expect(slow.response.body).toContain("timed out after 2 s")
    const [big] = await settled("alice/code", huge.id, 1, false)
    expect(big.response.body).toContain("answered more than 1024 KiB")
    // An answer too big is not retried; only the first 64 KiB are ever kept.
    expect(big.attempts).toBe(1)
    expect(big.response.body.length).toBeLessThan(64 * 1024 + 200)
    for (const id of [hang.id, huge.id]) await call("alice", "DELETE", `/repos/alice/code/hooks/${id}`)
  })
})

describe("TLS", () => {
  it("a receiver whose certificate is not trusted fails (SKIP_TLS_VERIFY is off)", async () => {
    let reached = 0
    const tls = createHttpsServer(selfSigned(), (_req, res) => {
      reached++
      res.writeHead(200).end()
    })
    await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve))
    const hook = await call("alice", "POST", "/repos/alice/code/hooks", {
      type: "forgejo",
      config: { url: `https://127.0.0.1:${(tls.address() as AddressInfo).port}/hook`, content_type: "json" },
      events: ["push"],
      active: true
    })
    const id = (await json(hook)).id
    await commit("h.txt", "over tls")
    await git(["push", "-q", "origin", "HEAD:main"])
    const [delivery] = await settled("alice/code", id, 1, false)
    expect(delivery.response.body).toMatch(/self[- ]signed certificate/)
    expect(reached).toBe(0)
    await call("alice", "DELETE", `/repos/alice/code/hooks/${id}`)
    tls.close()
  })
})

describe("PROXY_URL", () => {
  it("sends to the hosts PROXY_HOSTS names through the proxy, with the absolute URL", async () => {
    const url = receiver.url("/ok/proxied").replace("127.0.0.1", "localhost")
    const hook = await call("alice", "POST", "/repos/alice/code/hooks", {
      type: "forgejo",
      config: { url, content_type: "json" },
      events: ["push"],
      active: true
    })
    const id = (await json(hook)).id
    await commit("g.txt", "through the proxy")
    await git(["push", "-q", "origin", "HEAD:main"])
    const [delivery] = await settled("alice/code", id, 1, true)
    expect(delivery.response.body).toBe("via proxy")
    expect(proxied.map((p) => p.target)).toContain(url)
    expect(receiver.at("/ok/proxied")).toEqual([])
    await call("alice", "DELETE", `/repos/alice/code/hooks/${id}`)
  })
})

describe("history, redelivery and test deliveries", () => {
  it("a delivery is sent again with a new id; the authorization header is redacted in the history", async () => {
    const hook = await addHook("alice/code", "/ok/again", {
      events: ["push"],
      authorization_header: "Bearer hidden-token"
    })
    await commit("f.txt", "again")
    await git(["push", "-q", "origin", "HEAD:main"])
    const [first] = await receiver.wait("/ok/again")
    expect(first!.headers.authorization).toBe("Bearer hidden-token")
    const [delivery] = await settled("alice/code", hook.id, 1, true)
    expect(delivery.request.headers.Authorization).toBe("Bearer ******")
    expect(JSON.stringify(delivery)).not.toContain("hidden-token")
    const again = await call("alice", "POST", `/repos/alice/code/hooks/${hook.id}/deliveries/${delivery.id}/attempts`)
    expect(again.status).toBe(202)
    const copy = await json(again)
    expect(copy.redelivery_of).toBe(delivery.id)
    const got = await receiver.wait("/ok/again", 2)
    expect(got[1]!.body).toBe(got[0]!.body)
    expect(got[1]!.headers["x-forgejo-delivery"]).toBe(copy.uuid)
    expect(copy.uuid).not.toBe(delivery.uuid)
    expect((await call("alice", "GET", `/repos/alice/code/hooks/${hook.id}/deliveries/${delivery.id}`)).status).toBe(
      200
    )
    expect((await call("alice", "POST", `/repos/alice/code/hooks/${hook.id}/deliveries/999999/attempts`)).status).toBe(
      404
    )
    expect((await call("bob", "GET", `/repos/alice/code/hooks/${hook.id}/deliveries`)).status).toBe(403)
    await call("alice", "DELETE", `/repos/alice/code/hooks/${hook.id}`)
  })

  it("a test delivery sends the commit `ref` names, with `ref` as given; an empty repository is refused", async () => {
    // Its events do not include push: a test delivery is sent anyway.
    const hook = await addHook("alice/code", "/ok/test", { events: ["issues"], branch_filter: "nothing" })
    await git(["push", "-q", "origin", "HEAD:refs/heads/side"])
    const side = await git(["rev-parse", "HEAD"])
    const main = JSON.parse(
      (await call("alice", "GET", "/repos/alice/code/branches/main").then((r) => r.text())) || "{}"
    ).commit?.id
    expect((await call("alice", "POST", `/repos/alice/code/hooks/${hook.id}/tests?ref=side`)).status).toBe(204)
    const [got] = await receiver.wait("/ok/test")
    const payload = JSON.parse(got!.body)
    expect(payload).toMatchObject({
      ref: "side",
      before: side,
      after: side,
      total_commits: 1,
      sender: { login: "alice" }
    })
    expect(payload.commits.map((c: any) => c.id)).toEqual([side])
    expect(payload.head_commit.id).toBe(side)
    expect((await call("alice", "POST", `/repos/alice/code/hooks/${hook.id}/tests`)).status).toBe(204)
    const both = await receiver.wait("/ok/test", 2)
    expect(JSON.parse(both[1]!.body)).toMatchObject({ ref: "refs/heads/main", after: main })
    expect((await call("alice", "POST", `/repos/alice/code/hooks/${hook.id}/tests?ref=nope`)).status).toBe(404)

    expect((await call("alice", "POST", "/user/repos", { name: "empty" })).status).toBe(201)
    const emptyHook = await addHook("alice/empty", "/ok/empty")
    const refused = await call("alice", "POST", `/repos/alice/empty/hooks/${emptyHook.id}/tests`)
    expect(refused.status).toBe(409)
    expect((await json(refused)).message).toContain("empty")
  })
})

describe("default hooks", () => {
  it("are copied into a new repository once, and the copy hears its creation", async () => {
    const created = await call("root", "POST", "/admin/hooks", {
      type: "forgejo",
      config: { url: receiver.url("/ok/default"), content_type: "json" },
      events: ["repository"],
      active: true
    })
    expect(created.status).toBe(201)
    expect((await call("alice", "POST", "/user/repos", { name: "defaulted" })).status).toBe(201)
    const [got] = await receiver.wait("/ok/default")
    expect(JSON.parse(got!.body)).toMatchObject({ action: "created", repository: { full_name: "alice/defaulted" } })
    const hooks = await json(await call("alice", "GET", "/repos/alice/defaulted/hooks"))
    expect(hooks.filter((h: any) => h.url === receiver.url("/ok/default"))).toHaveLength(1)
    expect((await call("root", "DELETE", `/admin/hooks/${(await json(created)).id}`)).status).toBe(204)
  })
})

describe("wiki", () => {
  it("a page written through the API delivers Forgejo's wiki payload, created then edited", async () => {
    expect((await call("alice", "POST", "/user/repos", { name: "notes" })).status).toBe(201)
    await addHook("alice/notes", "/ok/wiki", { events: ["wiki"] })
    const content = Buffer.from("# Hello").toString("base64")
    expect(
      (
        await call("alice", "POST", "/repos/alice/notes/wiki/new", {
          title: "Home",
          content_base64: content,
          message: "first"
        })
      ).status
    ).toBe(201)
    expect(
      (
        await call("alice", "PATCH", "/repos/alice/notes/wiki/page/Home", {
          content_base64: Buffer.from("# Hi").toString("base64"),
          message: "second"
        })
      ).status
    ).toBe(200)
    const got = await receiver.wait("/ok/wiki", 2)
    expect(got.map((r) => r.headers["x-forgejo-event"])).toEqual(["wiki", "wiki"])
    for (const r of got) verify(r)
    expect(got.map((r) => JSON.parse(r.body))).toMatchObject([
      {
        action: "created",
        page: "Home",
        comment: "first",
        repository: { full_name: "alice/notes" },
        sender: { login: "alice" }
      },
      { action: "edited", page: "Home", comment: "second" }
    ])
  })
})

describe("commit status", () => {
  it("a posted status delivers Gitea's CommitStatusPayload (event `status`) to the hooks that chose it", async () => {
    expect((await call("alice", "POST", "/user/repos", { name: "ci", auto_init: true })).status).toBe(201)
    const chosen = (await json(
      await call("alice", "POST", "/repos/alice/ci/hooks", {
        type: "forgejo",
        config: { url: receiver.url("/ok/status"), content_type: "json", secret: SECRET },
        events: ["status"],
        active: true
      })
    )) as { id: number; events: Array<string> }
    expect(chosen.events).toEqual(["status"])
    const slack = await call("alice", "POST", "/repos/alice/ci/hooks", {
      type: "slack",
      config: { url: receiver.url("/ok/slack-status"), content_type: "json", channel: "#ci" },
      events: ["status"],
      active: true
    })
    expect(slack.status).toBe(201)
    // A hook that did not choose it hears nothing of it (the push below is its only delivery).
    await addHook("alice/ci", "/ok/not-status", { events: ["push"] })
    const branch = await json(await call("alice", "GET", "/repos/alice/ci/branches/main"))
    const sha = branch.commit.id as string
    const posted = await call("alice", "POST", `/repos/alice/ci/statuses/${sha}`, {
      state: "failure",
      context: "ci/build",
      description: "2 tests failed",
      target_url: "https://ci.example/build/7"
    })
    expect(posted.status).toBe(201)
    const status = await json(posted)
    const [got] = await receiver.wait("/ok/status")
    expect(got!.headers["x-forgejo-event"]).toBe("status")
    expect(got!.headers["x-forgejo-event-type"]).toBe("status")
    expect(got!.headers["x-github-event"]).toBe("status")
    verify(got!)
    const body = JSON.parse(got!.body)
    expect(Object.keys(body)).toEqual([
      "commit",
      "context",
      "created_at",
      "description",
      "id",
      "repository",
      "sender",
      "sha",
      "state",
      "target_url",
      "updated_at"
    ])
    expect(body).toMatchObject({
      commit: { id: sha, url: `${hearth.base}/alice/ci/commit/${sha}`, message: expect.any(String) },
      context: "ci/build",
      created_at: status.created_at,
      description: "2 tests failed",
      id: status.id,
      repository: { full_name: "alice/ci" },
      sender: { login: "alice" },
      sha,
      state: "failure",
      target_url: "https://ci.example/build/7",
      updated_at: status.created_at
    })
    const [chat] = await receiver.wait("/ok/slack-status")
    expect(JSON.parse(chat!.body).text).toBe(
      `[<${hearth.base}/alice/ci|alice/ci>] Commit Status changed: <https://ci.example/build/7|ci/build[${sha.slice(0, 10)}]: 2 tests failed> by alice`
    )
    // Deliveries to one receiver path arrive in order; push a commit and see that it comes alone.
    await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "alice", "alice/ci")])
    writeFileSync(join(work, "ci", "x.txt"), "x\n")
    await gitIn(join(work, "ci"), ["add", "x.txt"])
    await gitIn(join(work, "ci"), ["commit", "-q", "-m", "x"])
    await gitIn(join(work, "ci"), ["push", "-q", "origin", "HEAD:main"])
    const heard = await receiver.wait("/ok/not-status")
    expect(heard.map((r) => r.headers["x-forgejo-event"])).toEqual(["push"])
  })
})
