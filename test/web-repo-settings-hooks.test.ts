// Issue 17 item 3 (webhook settings pages) over plain HTTP, with a real receiver on 127.0.0.1: who
// may open them (a repository's admins, 403 for others, 404 for an invisible repository; an
// organization's owners; the user's own), hooks of several types created and edited through the
// form and read back through the API (events as chosen, secret and authorization header kept when
// left empty, never shown), refusals next to their field with what was typed kept, test deliveries
// and redeliveries with the delivery history (request, response, duration; the authorization
// redacted, the secret nowhere), deletion, CSRF, and escaping of hook URLs and delivery bodies.
import { createHmac } from "node:crypto"
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let receiver: Server
let port: number
const received: Array<{ path: string; headers: IncomingHttpHeaders; body: string }> = []
/** What the receiver answers: hostile text in a header and in the body. */
const ANSWER = corpus.slice(0, 12).join("\n")

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") })
      res.writeHead(200, { "content-type": "text/plain", "x-echo": "<script>alert(1)</script>" })
      res.end(ANSWER)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  port = (receiver.address() as AddressInfo).port
  hearth = await startHearth({ webhook: { ALLOWED_HOST_LIST: "loopback" } })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await new Promise<void>((resolve) => receiver?.close(() => resolve()))
})

const target = (path: string) => `http://127.0.0.1:${port}${path}`

const signedIn = async () => {
  const user = await createUser(hearth)
  const client = new WebClient(hearth.base)
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

let r = 0
const makeRepo = async (owner: string, options: { private?: boolean } = {}) => {
  const name = `repo${++r}`
  const res = await request(hearth, "POST", "/user/repos", basic(owner), {
    name,
    auto_init: true,
    private: options.private ?? false
  })
  expect(res.status).toBe(201)
  return name
}

const api = (method: string, path: string, as: string, body?: unknown) => request(hearth, method, path, basic(as), body)

const apiHooks = async (path: string, as: string) => (await json(await api("GET", path, as))) as Array<any>

/** Waits (bounded) until `count` requests reached `prefix` on the receiver. */
const arrived = async (prefix: string, count = 1) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const got = received.filter((r) => r.path.startsWith(prefix))
    if (got.length >= count) return got
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} request(s) at ${prefix}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Waits (bounded) until the hook has `count` delivered deliveries. */
const delivered = async (repo: string, owner: string, id: number, count: number) => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const list = (await json(await api("GET", `/repos/${repo}/hooks/${id}/deliveries`, owner))) as Array<any>
    if (list.filter((d) => d.delivered).length >= count) return list
    if (Date.now() > deadline) throw new Error("deliveries did not settle")
    await new Promise((r) => setTimeout(r, 50))
  }
}

const sign = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex")

describe("access", () => {
  it("repository admins open the pages; others get 403, an invisible repository 404, visitors the login", async () => {
    const { user: owner, client } = await signedIn()
    const pub = await makeRepo(owner.name)
    const priv = await makeRepo(owner.name, { private: true })
    const writer = await signedIn()
    const stranger = await signedIn()
    expect(
      (
        await api("PUT", `/repos/${owner.name}/${pub}/collaborators/${writer.user.name}`, owner.name, {
          permission: "write"
        })
      ).status
    ).toBe(204)
    for (const page of ["settings/hooks", "settings/hooks/forgejo/new", "settings/hooks/slack/new"]) {
      const path = `/${owner.name}/${pub}/${page}`
      expect((await client.get(path)).status, path).toBe(200)
      expect((await writer.client.get(path)).status, path).toBe(403)
      expect((await stranger.client.get(`/${owner.name}/${priv}/${page}`)).status, path).toBe(404)
      const visitor = await new WebClient(hearth.base).get(path)
      expect(visitor.status).toBe(302)
    }
    expect((await client.get(`/${owner.name}/${pub}/settings/hooks/nosuchtype/new`)).status).toBe(404)
    expect((await client.get(`/${owner.name}/${pub}/settings/hooks/99999`)).status).toBe(404)
    // A writer's POST creates nothing.
    const csrf = csrfOf((await writer.client.get(`/${owner.name}/${pub}`)).text)
    const refused = await writer.client.post(
      `/${owner.name}/${pub}/settings/hooks/forgejo/new`,
      { payload_url: target("/w"), content_type: "json", events: "push_only", active: "on" },
      csrf
    )
    expect(refused.status).toBe(403)
    // Without the CSRF token: 400, nothing created.
    const noToken = await client.post(
      `/${owner.name}/${pub}/settings/hooks/forgejo/new`,
      { payload_url: target("/w"), content_type: "json", events: "push_only", active: "on" },
      undefined
    )
    expect(noToken.status).toBe(400)
    expect(await apiHooks(`/repos/${owner.name}/${pub}/hooks`, owner.name)).toEqual([])
    // Every type has its form; the list offers them.
    const list = await client.get(`/${owner.name}/${pub}/settings/hooks`)
    expect(list.text).toContain("There are no webhooks.")
    expect(list.text).toContain(`href="/${owner.name}/${pub}/settings/hooks/matrix/new"`)
  })
})

describe("repository hooks", () => {
  it("adds a hook with its options, shows it, tests, redelivers, edits and deletes it", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/hooks`
    const added = await client.submit(`${base}/forgejo/new`, {
      payload_url: target("/one"),
      content_type: "form",
      secret: "s3cr3t-value",
      branch_filter: "{main,release/*}",
      authorization_header: "Bearer tok3n-value",
      events: "choose_events",
      push: "on",
      issues: "on",
      active: "on"
    })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${base}?done=added`)
    const [hook] = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    expect(hook).toMatchObject({
      type: "forgejo",
      url: target("/one"),
      content_type: "form",
      branch_filter: "{main,release/*}",
      events: ["push", "issues"],
      authorization_header: "Bearer ******",
      active: true
    })
    const listed = await client.get(added.location!)
    expect(listed.text).toContain("The webhook has been added.")
    expect(listed.text).toMatch(/data-testid="hook-status">[^<]*<svg[\s\S]*?Not delivered yet/)

    // The hook's page: the form filled in, no secret anywhere.
    const page = await client.get(`${base}/${hook.id}`)
    expect(page.status).toBe(200)
    expect(page.text).toMatch(/id="field-events-choose_events" name="events" value="choose_events" checked/)
    expect(page.text).toMatch(/id="field-issues" name="issues" value="on" checked/)
    expect(page.text).not.toMatch(/id="field-fork" name="fork" value="on" checked/)
    expect(page.text).toContain("Nothing has been delivered yet.")
    expect(page.text).not.toContain("s3cr3t-value")
    expect(page.text).not.toContain("tok3n-value")

    // Test delivery: sent with the secret's signature and the authorization; the history shows it.
    const tested = await client.post(`${base}/${hook.id}/test`, {}, csrfOf(page.text))
    expect(tested.status).toBe(303)
    expect(tested.location).toBe(`${base}/${hook.id}?done=tested`)
    const [first] = await arrived("/one")
    expect(first!.headers.authorization).toBe("Bearer tok3n-value")
    const payload = decodeURIComponent(first!.body.replace(/^payload=/, "").replace(/\+/g, " "))
    expect(first!.headers["x-forgejo-signature"]).toBe(sign("s3cr3t-value", payload))
    await delivered(`${user.name}/${name}`, user.name, hook.id, 1)
    const history = await client.get(`${base}/${hook.id}`)
    expect(history.text).toContain('data-testid="delivery"')
    expect(history.text).toMatch(/data-testid="delivery-request-url">http:\/\/127\.0\.0\.1:\d+\/one</)
    expect(history.text).toMatch(/data-testid="delivery-request-headers">[^<]*Authorization: Bearer \*\*\*\*\*\*/)
    expect(history.text).toMatch(/data-testid="delivery-request-body">payload=/)
    expect(history.text).toMatch(/data-testid="delivery-response-status">200</)
    expect(history.text).toMatch(/data-testid="delivery-response-headers">[^<]*x-echo: &lt;script&gt;/)
    expect(history.text).toMatch(/ \d+ ms/)
    expect(history.text).not.toContain("s3cr3t-value")
    expect(history.text).not.toContain("tok3n-value")
    expect(executable(history.text)).toEqual([])
    expect((await client.get(base)).text).toContain("Last delivery succeeded")

    // Redeliver: a new delivery of the same payload.
    const [task] = (await json(
      await api("GET", `/repos/${user.name}/${name}/hooks/${hook.id}/deliveries`, user.name)
    )) as Array<any>
    const replay = await client.post(`${base}/${hook.id}/replay/${task.id}`, {}, csrfOf(history.text))
    expect(replay.status).toBe(303)
    expect(replay.location).toBe(`${base}/${hook.id}?done=redelivered`)
    await arrived("/one", 2)
    const again = await delivered(`${user.name}/${name}`, user.name, hook.id, 2)
    expect(again[0].redelivery_of).toBe(task.id)
    expect((await client.get(`${base}/${hook.id}`)).text).toContain(`redelivery of #${task.id}`)
    expect((await client.post(`${base}/${hook.id}/replay/999999`, {}, csrfOf(history.text))).status).toBe(404)

    // Edit, secret and authorization left empty: kept; everything else as sent.
    const edited = await client.submit(`${base}/${hook.id}`, {
      payload_url: target("/two"),
      content_type: "json",
      secret: "",
      branch_filter: "",
      authorization_header: "",
      events: "send_everything",
      active: "on"
    })
    expect(edited.status).toBe(303)
    expect(edited.location).toBe(`${base}/${hook.id}?done=updated`)
    const [changed] = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    expect(changed).toMatchObject({ url: target("/two"), content_type: "json", branch_filter: "", active: true })
    expect(changed.events).toContain("wiki")
    expect(changed.events).toContain("pull_request_review_approved")
    expect(changed.authorization_header).toBe("Bearer ******")
    const editedPage = await client.get(edited.location!)
    expect(editedPage.text).toMatch(/id="field-events-send_everything" name="events" value="send_everything" checked/)
    await client.post(`${base}/${hook.id}/test`, {}, csrfOf(editedPage.text))
    const [second] = await arrived("/two")
    expect(second!.headers.authorization).toBe("Bearer tok3n-value")
    expect(second!.headers["x-forgejo-signature"]).toBe(sign("s3cr3t-value", second!.body))

    // A new secret, the authorization removed, push only.
    const renewed = await client.submit(`${base}/${hook.id}`, {
      payload_url: target("/three"),
      content_type: "json",
      secret: "n3w-secret",
      remove_authorization: "on",
      events: "push_only",
      active: "on"
    })
    expect(renewed.status).toBe(303)
    const [pushOnly] = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    expect(pushOnly).toMatchObject({ events: ["push"], authorization_header: "" })
    await client.post(`${base}/${hook.id}/test`, {}, csrfOf((await client.get(`${base}/${hook.id}`)).text))
    const [third] = await arrived("/three")
    expect(third!.headers.authorization).toBeUndefined()
    expect(third!.headers["x-forgejo-signature"]).toBe(sign("n3w-secret", third!.body))

    // Delete, behind its disclosure.
    const before = await client.get(`${base}/${hook.id}`)
    expect(before.text).toContain('data-testid="delete-hook"')
    const deleted = await client.post(`${base}/${hook.id}/delete`, {}, csrfOf(before.text))
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe(`${base}?done=deleted`)
    expect((await api("GET", `/repos/${user.name}/${name}/hooks/${hook.id}`, user.name)).status).toBe(404)
  })

  it("shows refusals next to their field and keeps what was typed, secrets excepted", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/hooks`
    const url = await client.submit(`${base}/forgejo/new`, {
      payload_url: "not a url",
      content_type: "json",
      secret: "typed-secret",
      branch_filter: "main",
      events: "choose_events",
      wiki: "on"
    })
    expect(url.status).toBe(422)
    expect(url.text).toMatch(/data-testid="error-payload_url">Invalid url</)
    expect(url.text).toContain('value="not a url"')
    expect(url.text).not.toContain("typed-secret")
    expect(url.text).toMatch(/id="field-wiki" name="wiki" value="on" checked/)
    expect(url.text).toMatch(/id="field-events-choose_events" name="events" value="choose_events" checked/)
    // The active box as it was sent (off).
    expect(url.text).not.toMatch(/id="field-active" name="active" value="on" checked/)

    const filter = await client.submit(`${base}/forgejo/new`, {
      payload_url: target("/x"),
      content_type: "json",
      branch_filter: "{main",
      events: "push_only"
    })
    expect(filter.status).toBe(422)
    expect(filter.text).toMatch(
      /data-testid="error-branch_filter">\[BranchFilter\]: &quot;\{main&quot; is not a valid glob/
    )

    const required = await client.submit(`${base}/slack/new`, { payload_url: "", channel: "", events: "push_only" })
    expect(required.status).toBe(422)
    expect(required.text).toMatch(/data-testid="error-payload_url">Enter the target url./)
    expect(required.text).toMatch(/data-testid="error-channel">Enter the channel./)

    const channel = await client.submit(`${base}/slack/new`, {
      payload_url: target("/s"),
      channel: "Not A Channel",
      events: "push_only"
    })
    expect(channel.status).toBe(422)
    expect(channel.text).toMatch(/data-testid="error-channel">Invalid slack channel name</)
    expect(channel.text).toContain('value="Not A Channel"')

    const header = await client.submit(`${base}/forgejo/new`, {
      payload_url: target("/x"),
      content_type: "json",
      authorization_header: "Bearer a\r\nX-Evil: 1",
      events: "push_only"
    })
    expect(header.status).toBe(422)
    expect(header.text).toContain('data-testid="error-authorization_header"')
    expect(await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)).toEqual([])
  })

  it("builds matrix and telegram hooks from their fields and keeps their tokens when left empty", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/hooks`
    const matrix = await client.submit(`${base}/matrix/new`, {
      homeserver_url: target("/mx"),
      room_id: "!room:example.org",
      message_type: "2",
      access_token: "mx-token",
      events: "push_only",
      active: "on"
    })
    expect(matrix.status).toBe(303)
    const telegram = await client.submit(`${base}/telegram/new`, {
      bot_token: "123:abc",
      chat_id: "-42",
      thread_id: "",
      events: "push_only",
      active: "on"
    })
    expect(telegram.status).toBe(303)
    const [m, t] = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    expect(m).toMatchObject({
      type: "matrix",
      url: `${target("/mx")}/_matrix/client/v3/rooms/!room%3Aexample.org/send/m.room.message`,
      authorization_header: "Bearer ******",
      metadata: { homeserver_url: target("/mx"), room_id: "!room:example.org", message_type: 2 }
    })
    expect(t).toMatchObject({
      type: "telegram",
      url: "https://api.telegram.org/bot123:abc/sendMessage?chat_id=-42",
      metadata: { chat_id: "-42" }
    })
    // The bot token in the URL is not shown.
    const list = await client.get(base)
    expect(list.text).toContain("https://api.telegram.org/bot******/sendMessage?chat_id=-42")
    expect(list.text).not.toContain("123:abc")
    expect((await client.get(`${base}/${t.id}`)).text).not.toContain("123:abc")
    // Edited with the tokens left empty: kept.
    const page = await client.get(`${base}/${m.id}`)
    expect(page.text).not.toContain("mx-token")
    expect(page.text).toMatch(/id="field-message_type"[^>]*>[\s\S]*?<option value="2" selected>/)
    expect(
      (
        await client.post(
          `${base}/${m.id}`,
          {
            homeserver_url: target("/mx"),
            room_id: "!other:example.org",
            message_type: "1",
            events: "push_only",
            active: "on"
          },
          csrfOf(page.text)
        )
      ).status
    ).toBe(303)
    expect(
      (
        await client.post(
          `${base}/${t.id}`,
          { chat_id: "-43", thread_id: "7", events: "push_only", active: "on" },
          csrfOf(page.text)
        )
      ).status
    ).toBe(303)
    const [m2, t2] = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    expect(m2).toMatchObject({
      url: `${target("/mx")}/_matrix/client/v3/rooms/!other%3Aexample.org/send/m.room.message`,
      authorization_header: "Bearer ******",
      metadata: { room_id: "!other:example.org", message_type: 1 }
    })
    expect(t2.url).toBe("https://api.telegram.org/bot123:abc/sendMessage?chat_id=-43&message_thread_id=7")
    // The matrix token still reaches the receiver.
    await client.post(`${base}/${m.id}/test`, {}, csrfOf(page.text))
    const [sent] = await arrived("/mx/_matrix/")
    expect(sent!.headers.authorization).toBe("Bearer mx-token")
  })

  it("refuses a test delivery of an empty repository next to the history", async () => {
    const { user, client } = await signedIn()
    const res = await api("POST", "/user/repos", user.name, { name: "empty" })
    expect(res.status).toBe(201)
    const base = `/${user.name}/empty/settings/hooks`
    expect(
      (
        await client.submit(`${base}/forgejo/new`, {
          payload_url: target("/e"),
          content_type: "json",
          events: "push_only",
          active: "on"
        })
      ).status
    ).toBe(303)
    const [hook] = await apiHooks(`/repos/${user.name}/empty/hooks`, user.name)
    const refused = await client.submit(`${base}/${hook.id}`, {}, `${base}/${hook.id}/test`)
    expect(refused.status).toBe(409)
    expect(refused.text).toMatch(/data-testid="form-error">the repository is empty/)
  })

  it("shows hook URLs and delivery bodies from the XSS corpus as text", async () => {
    const { user, client } = await signedIn()
    const name = await makeRepo(user.name)
    const base = `/${user.name}/${name}/settings/hooks`
    expect((await api("PATCH", `/repos/${user.name}/${name}`, user.name, { description: corpus[0] })).status).toBe(200)
    for (let i = 0; i < corpus.length; i += 10) {
      const res = await client.submit(`${base}/forgejo/new`, {
        payload_url: target(`/xss?q=${corpus[i]}`),
        content_type: "json",
        branch_filter: corpus[i + 1] ?? "",
        events: "push_only",
        active: "on"
      })
      expect([303, 422], corpus[i]).toContain(res.status)
      if (res.status === 422) expect(executable(res.text), corpus[i]).toEqual([])
    }
    const list = await client.get(base)
    expect(list.text).toContain('data-testid="hook"')
    expect(executable(list.text)).toEqual([])
    const hooks = await apiHooks(`/repos/${user.name}/${name}/hooks`, user.name)
    const [hook] = hooks
    const page = await client.get(`${base}/${hook.id}`)
    expect(executable(page.text)).toEqual([])
    await client.post(`${base}/${hook.id}/test`, {}, csrfOf(page.text))
    await delivered(`${user.name}/${name}`, user.name, hook.id, 1)
    const history = await client.get(`${base}/${hook.id}`)
    expect(history.text).toContain('data-testid="delivery-response-body"')
    expect(executable(history.text)).toEqual([])
  })
})

describe("organization and user hooks", () => {
  it("lets an organization's owners manage its hooks, and a user theirs", async () => {
    const { user, client } = await signedIn()
    const member = await signedIn()
    const org = `org${++r}`
    expect((await api("POST", "/orgs", user.name, { username: org })).status).toBe(201)
    const base = `/org/${org}/settings/hooks`
    expect((await client.get(base)).status).toBe(200)
    expect((await member.client.get(base)).status).toBe(403)
    expect((await client.get("/org/no-such-org/settings/hooks")).status).toBe(404)
    const added = await client.submit(`${base}/gitea/new`, {
      payload_url: target("/org"),
      content_type: "json",
      events: "choose_events",
      repository: "on",
      active: "on"
    })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${base}?done=added`)
    const [hook] = await apiHooks(`/orgs/${org}/hooks`, user.name)
    expect(hook).toMatchObject({ type: "gitea", url: target("/org"), events: ["repository"] })
    const page = await client.get(`${base}/${hook.id}`)
    expect(page.status).toBe(200)
    // No test delivery outside a repository.
    expect(page.text).not.toContain("Test delivery")
    expect(
      (await member.client.post(`${base}/${hook.id}/delete`, {}, csrfOf((await member.client.get("/")).text))).status
    ).toBe(403)
    expect((await client.post(`${base}/${hook.id}/delete`, {}, csrfOf(page.text))).status).toBe(303)
    expect(await apiHooks(`/orgs/${org}/hooks`, user.name)).toEqual([])

    const mine = await client.submit("/user/settings/hooks/forgejo/new", {
      payload_url: target("/user"),
      content_type: "json",
      events: "push_only",
      active: "on"
    })
    expect(mine.status).toBe(303)
    expect(mine.location).toBe("/user/settings/hooks?done=added")
    const [own] = await apiHooks("/user/hooks", user.name)
    expect(own).toMatchObject({ url: target("/user"), events: ["push"] })
    expect((await client.get("/user/settings/hooks")).text).toContain(target("/user"))
    // Another user cannot open it.
    expect((await member.client.get(`/user/settings/hooks/${own.id}`)).status).toBe(404)
  })
})
