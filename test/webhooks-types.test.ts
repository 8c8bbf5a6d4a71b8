// Every hook type's request (src/webhooks/Convert.ts; CONTRACT-WEBHOOKS §1.6, §1.9, §1.11): one
// push and one issue delivered to hooks of all thirteen types on a real receiver, each checked for
// its method, URL, headers and body shape. Unlike Forgejo, the types that need settings beyond
// `url` (discord, matrix, packagist, sourcehut_builds) work when created through the API.
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer as createHttpServer, type Server as HttpServer } from "node:http"
import { createServer as createHttpsServer, type Server } from "node:https"
import { type AddressInfo, connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, remoteAs } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { type Received, type Receiver, startReceiver } from "./support/receiver.ts"
import { selfSigned } from "./support/tls.ts"

let hearth: Hearth
let receiver: Receiver
let work: string
let pushed = ""
// A TLS receiver with a self-signed certificate: reached because this server sets SKIP_TLS_VERIFY.
let tls: Server
const overTls: Array<string> = []
// A CONNECT proxy ([webhook] PROXY_URL) that counts the tunnels it opens, and what came through them.
let proxy: HttpServer
const tunnels: Array<string> = []
const tunnelled: Array<string> = []
const call = (method: string, path: string, body?: unknown) => request(hearth, method, path, basic("alice"), body)

const TYPES: Record<string, Record<string, string>> = {
  forgejo: {},
  gitea: {},
  gogs: {},
  slack: { channel: "#builds", username: "hearth-bot", icon_url: "http://x.example/i.png", color: "good" },
  discord: { username: "hearth-bot", icon_url: "http://x.example/i.png" },
  dingtalk: {},
  telegram: {},
  msteams: {},
  feishu: {},
  matrix: { room_id: "!room:x.example", message_type: "2", access_token: "mx-token" },
  wechatwork: {},
  packagist: { username: "u", package_url: "https://packagist.org/packages/acme/code" },
  sourcehut_builds: { manifest_path: ".build.yml", visibility: "UNLISTED", secrets: "true", access_token: "srht-token" }
}

const at = (type: string) => receiver.at(`/t/${type}`)

beforeAll(async () => {
  receiver = await startReceiver()
  tls = createHttpsServer(selfSigned(), (req, res) => {
    ;(req.url === "/tunnel" ? tunnelled : overTls).push(String(req.headers["x-forgejo-event"]))
    req.resume()
    res.writeHead(200).end()
  })
  await new Promise<void>((resolve) => tls.listen(0, "127.0.0.1", resolve))
  proxy = createHttpServer((_req, res) => res.writeHead(502).end("only CONNECT here"))
  proxy.on("connect", (req, client, head) => {
    tunnels.push(req.url ?? "")
    const [host, port] = (req.url ?? "").split(/:(?=\d+$)/)
    const upstream = connect(Number(port), host!, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n")
      upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on("error", () => client.destroy())
    client.on("error", () => upstream.destroy())
  })
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
  hearth = await startHearth({
    webhook: {
      ALLOWED_HOST_LIST: "loopback",
      SKIP_TLS_VERIFY: "true",
      PROXY_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      // Forgejo's globs match the host as the URL writes it, port included.
      PROXY_HOSTS: "*.invalid, localhost:*"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-webhook-types-"))
  await createUser(hearth, { username: "alice" })
  expect((await call("POST", "/user/repos", { name: "code", auto_init: true })).status).toBe(201)
  for (const [type, config] of Object.entries(TYPES)) {
    const res = await call("POST", "/repos/alice/code/hooks", {
      type,
      config: { url: receiver.url(`/t/${type}`), content_type: "json", secret: "s", ...config },
      events: ["push", "issues"],
      active: true
    })
    expect(res.status, `${type}: ${await res.clone().text()}`).toBe(201)
  }
  const tlsHook = await call("POST", "/repos/alice/code/hooks", {
    type: "forgejo",
    config: { url: `https://127.0.0.1:${(tls.address() as AddressInfo).port}/hook`, content_type: "json" },
    events: ["issues"],
    active: true
  })
  expect(tlsHook.status).toBe(201)
  const tunnelHook = await call("POST", "/repos/alice/code/hooks", {
    type: "forgejo",
    config: { url: `https://localhost:${(tls.address() as AddressInfo).port}/tunnel`, content_type: "json" },
    events: ["issues"],
    active: true
  })
  expect(tunnelHook.status).toBe(201)
  await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "alice", "alice/code"), "code"])
  const dir = join(work, "code")
  writeFileSync(join(dir, ".build.yml"), "image: alpine/edge\ntasks:\n  - hello: echo hi\n")
  await gitIn(dir, ["add", ".build.yml"])
  await gitIn(dir, ["commit", "-q", "-m", "add a build manifest"])
  pushed = await gitIn(dir, ["rev-parse", "HEAD"])
  await gitIn(dir, ["push", "-q", "origin", "HEAD:main"])
  expect((await call("POST", "/repos/alice/code/issues", { title: "broken" })).status).toBe(201)
  // Every type but sourcehut_builds (push only) gets both; sourcehut_builds the push.
  for (const type of Object.keys(TYPES)) await receiver.wait(`/t/${type}`, type === "sourcehut_builds" ? 1 : 2)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
  tls?.close()
  proxy?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const body = (r: Received) => JSON.parse(r.body)

describe("payload types", () => {
  it("forgejo, gitea and gogs send the event payload with every X-*-Event header", () => {
    for (const type of ["forgejo", "gitea", "gogs"]) {
      const push = at(type).find((r) => r.headers["x-forgejo-event"] === "push")!
      expect(body(push)).toMatchObject({
        ref: "refs/heads/main",
        after: pushed,
        repository: { full_name: "alice/code" }
      })
      expect(push.headers["x-gogs-event"]).toBe("push")
    }
  })
})

describe("SKIP_TLS_VERIFY", () => {
  it("reaches a receiver with a self-signed certificate when set", async () => {
    const deadline = Date.now() + 20_000
    while (overTls.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(overTls).toEqual(["issues"])
  })
})

describe("PROXY_URL with an https receiver", () => {
  it("goes through a CONNECT tunnel to host:port, TLS inside it; receivers PROXY_HOSTS does not name go direct", async () => {
    const deadline = Date.now() + 20_000
    while (tunnelled.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(tunnelled).toEqual(["issues"])
    expect(tunnels).toEqual([`localhost:${(tls.address() as AddressInfo).port}`])
    // The receiver at 127.0.0.1 (not named by PROXY_HOSTS) was reached without the proxy.
    expect(overTls).toEqual(["issues"])
  })
})

describe("chat types", () => {
  it("slack: text with <url|text> links, the channel settings, one attachment of commits", () => {
    const push = at("slack").find((r) => r.headers["x-forgejo-event"] === "push")!
    const b = body(push)
    expect(b).toMatchObject({
      channel: "#builds",
      username: "hearth-bot",
      icon_url: "http://x.example/i.png",
      unfurl_links: 0,
      link_names: 0
    })
    expect(b.text).toContain(`<${hearth.base}/alice/code/src/branch/main|alice/code:main>`)
    expect(b.text).toContain("1 new commit")
    expect(b.attachments).toHaveLength(1)
    expect(b.attachments[0]).toMatchObject({ color: "good", title: `${hearth.base}/alice/code` })
    expect(b.attachments[0].text).toContain(
      `<${hearth.base}/alice/code/commit/${pushed}|${pushed.slice(0, 7)}>: add a build manifest`
    )
    expect(push.headers["x-forgejo-signature"]).toMatch(/^[0-9a-f]{64}$/)
  })

  it("discord: an embed with title, description, url, color and author", () => {
    const b = body(at("discord").find((r) => r.headers["x-forgejo-event"] === "push")!)
    expect(b.username).toBe("hearth-bot")
    expect(b.avatar_url).toBe("http://x.example/i.png")
    expect(b.embeds[0]).toMatchObject({
      title: "[alice/code:main] 1 new commit pushed by alice",
      url: `${hearth.base}/alice/code/commit/${pushed}`,
      color: 0x1ac600,
      author: { name: "alice" }
    })
    expect(b.embeds[0].description).toContain(`[${pushed.slice(0, 7)}](${hearth.base}/alice/code/commit/${pushed})`)
    const issue = body(at("discord").find((r) => r.headers["x-forgejo-event"] === "issues")!)
    expect(issue.embeds[0].title).toContain("Issue opened: #1 broken")
  })

  it("dingtalk, telegram, msteams, feishu, wechatwork: their message shapes", () => {
    const pushOf = (type: string) => body(at(type).find((r) => r.headers["x-forgejo-event"] === "push")!)
    const ding = pushOf("dingtalk")
    expect(ding.msgtype).toBe("actionCard")
    expect(ding.actionCard).toMatchObject({ hideAvatar: "0", title: "[alice/code:main] 1 new commit pushed by alice" })
    expect(ding.actionCard.singleURL).toBe(
      `dingtalk://dingtalkclient/page/link?pc_slide=false&url=${encodeURIComponent(`${hearth.base}/alice/code/commit/${pushed}`)}`
    )
    const telegram = pushOf("telegram")
    expect(telegram).toMatchObject({ parse_mode: "HTML", disable_web_page_preview: true })
    expect(telegram.text).toContain(`<a href="${hearth.base}/alice/code/src/branch/main">alice/code:main</a>`)
    const teams = pushOf("msteams")
    expect(teams).toMatchObject({
      "@type": "MessageCard",
      "@context": "https://schema.org/extensions",
      themeColor: "1ac600",
      title: "[alice/code:main] 1 new commit pushed by alice",
      summary: "[alice/code:main] 1 new commit pushed by alice",
      potentialAction: [{ "@type": "OpenUri", name: "View in Forgejo" }]
    })
    expect(teams.sections[0].facts[0]).toEqual({ name: "Repository:", value: "alice/code" })
    const feishu = pushOf("feishu")
    expect(feishu.msg_type).toBe("text")
    expect(feishu.content.text).toContain("[alice/code:main] 1 new commit pushed by alice")
    const wechat = pushOf("wechatwork")
    expect(wechat.msgtype).toBe("markdown")
    expect(wechat.markdown.content).toContain(`[alice/code:main](${hearth.base}/alice/code/src/branch/main)`)
  })

  it("matrix: PUT to <url>/<sha1 of the body> with the access token, no X-Forgejo headers", () => {
    const push = at("matrix").find((r) => r.body.includes("io.gitea.commits"))!
    expect(push.method).toBe("PUT")
    expect(push.path).toBe(`/t/matrix/${createHash("sha1").update(push.body).digest("hex")}`)
    expect(push.headers.authorization).toBe("Bearer mx-token")
    expect(push.headers["x-forgejo-event"]).toBeUndefined()
    const b = body(push)
    expect(b).toMatchObject({ msgtype: "m.text", format: "org.matrix.custom.html" })
    expect(b.formatted_body).toContain(`<a href="${hearth.base}/alice/code/src/branch/main">alice/code:main</a>`)
    expect(b.body).toContain(`[alice/code:main](${hearth.base}/alice/code/src/branch/main)`)
    expect(b["io.gitea.commits"][0].id).toBe(pushed)
  })

  it("packagist: the package URL for every event", () => {
    for (const r of at("packagist")) {
      expect(r.method).toBe("POST")
      expect(body(r)).toEqual({ repository: { url: "https://packagist.org/packages/acme/code" } })
      expect(r.headers["x-forgejo-event"]).toBeUndefined()
    }
  })

  it("sourcehut_builds: a GraphQL job with the manifest read at the pushed commit; push only", () => {
    const all = at("sourcehut_builds")
    expect(all).toHaveLength(1)
    const r = all[0]!
    expect(r.headers.authorization).toBe("Bearer srht-token")
    const b = body(r)
    expect(b.query).toContain("submit(")
    expect(b.variables).toMatchObject({
      manifest: "image: alpine/edge\ntasks:\n  - hello: echo hi\n",
      tags: ["alice/code", "main", ".build.yml"],
      note: "add a build manifest",
      secrets: true,
      execute: true,
      visibility: "UNLISTED"
    })
  })

  it("a push without commits (a tag) reaches only forgejo, gitea and gogs hooks (Forgejo's rule)", async () => {
    await gitIn(join(work, "code"), ["tag", "v1.0"])
    await gitIn(join(work, "code"), ["push", "-q", "origin", "v1.0"])
    for (const type of ["forgejo", "gitea", "gogs"]) {
      const tagged = (await receiver.wait(`/t/${type}`, 3)).find((r) => JSON.parse(r.body).ref === "refs/tags/v1.0")!
      expect(JSON.parse(tagged.body)).toMatchObject({ commits: [], total_commits: 0, head_commit: null })
    }
    // The tasks of one event are stored together: the others have none for it.
    const hooks = await json(await call("GET", "/repos/alice/code/hooks"))
    for (const hook of hooks.filter((h: any) => !["forgejo", "gitea", "gogs"].includes(h.type))) {
      const list = await json(await call("GET", `/repos/alice/code/hooks/${hook.id}/deliveries`))
      expect(
        list.map((d: any) => d.event),
        hook.type
      ).not.toContain("create")
      expect(
        list.filter((d: any) => d.event === "push"),
        hook.type
      ).toHaveLength(1)
    }
  })

  it("a type that cannot send an event records the delivery as failed without sending", async () => {
    const hooks = await json(await call("GET", "/repos/alice/code/hooks"))
    const srht = hooks.find((h: any) => h.type === "sourcehut_builds")
    const list = await json(await call("GET", `/repos/alice/code/hooks/${srht.id}/deliveries`))
    const issue = list.find((d: any) => d.event === "issues")
    expect(issue).toMatchObject({ delivered: true, success: false })
    expect(issue.response.body).toContain("sourcehut_builds hooks send only push and create events")
  })
})
