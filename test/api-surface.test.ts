// Issue 23 item 7: Hearth's API surface against Forgejo's (`../shared/reference/swagger.v1.json`).
// The served OpenAPI document lists every operation, the federation's too (served beside HttpApi);
// this file compares it with Forgejo's, prints what Forgejo has that Hearth does not yet (Actions
// excluded: listed by name as not provided), and fails when an operation Hearth had is gone.
// `test/api-surface.txt` is that list of Hearth's operations: add the new ones printed here
// (`API_SURFACE_WRITE=1 npx vitest run test/api-surface.test.ts` rewrites it from the document).
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { swaggerPath } from "./support/swagger.ts"

type Paths = Record<string, Record<string, { operationId?: string; parameters?: Array<{ name: string; in: string }> }>>

const METHODS = new Set(["get", "post", "put", "patch", "delete", "head"])
const KNOWN = new URL("./api-surface.txt", import.meta.url)

/** `GET /repos/{}/{}/contents/{}`: the method and the path under /api/v1, parameters unnamed. */
const operations = (paths: Paths, prefix: string): Map<string, string> => {
  const found = new Map<string, string>()
  for (const [path, item] of Object.entries(paths)) {
    if (!path.startsWith(prefix)) continue
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.has(method)) continue
      const key = `${method.toUpperCase()} ${path.slice(prefix.length).replace(/\{[^}]+\}/g, "{}")}`
      found.set(key, operation.operationId ?? "")
    }
  }
  return found
}

// Forgejo Actions (runners, workflows, secrets, variables, artifacts) are not provided by Hearth.
const isActions = (key: string) => /\/actions(\/|$)|\/runners(\/|$)/.test(key)
// Forgejo's document declares the outboxes as POST; they are read with GET (ActivityPub), which
// is how Hearth serves them.
const FORGEJO_QUIRKS: Record<string, string> = {
  "POST /activitypub/actor/outbox": "GET /activitypub/actor/outbox",
  "POST /activitypub/repository-id/{}/outbox": "GET /activitypub/repository-id/{}/outbox"
}

let hearth: Hearth
let document: { paths: Paths }

beforeAll(async () => {
  hearth = await startHearth()
  document = await json(await fetch(`${hearth.base}/api/swagger.v1.json`))
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("the OpenAPI document", () => {
  it("lists the federation's routes, served beside HttpApi, and they answer", async () => {
    const hearthOps = operations(document.paths, "/api/v1")
    expect(hearthOps.get("GET /nodeinfo")).toBe("getNodeInfo")
    expect(hearthOps.get("GET /activitypub/user-id/{}")).toBe("activitypubPerson")
    expect(hearthOps.get("POST /activitypub/repository-id/{}/inbox")).toBe("activitypubRepositoryInbox")
    expect(document.paths["/.well-known/webfinger"]?.get?.operationId).toBe("webfinger")
    // The instance actor names its outbox; the outbox answers (it was listed, not served).
    const actor = await fetch(`${hearth.base}/api/v1/activitypub/actor/outbox`)
    expect(actor.status).toBe(200)
    expect((await json(actor)).type).toBe("OrderedCollection")
  })

  it("names wildcard parameters as Forgejo does, never `*`, and lists the bare paths they answer", async () => {
    const contents = document.paths["/api/v1/repos/{owner}/{repo}/contents/{filepath}"]
    expect(contents?.get?.operationId).toBe("repoGetContents")
    expect(contents?.get?.parameters?.map((p) => p.name)).toContain("filepath")
    expect(document.paths["/api/v1/repos/{owner}/{repo}/wiki/page/{pageName}"]?.get).toBeDefined()
    expect(Object.keys(document.paths).filter((path) => path.includes("*"))).toEqual([])
    const bare = document.paths["/api/v1/repos/{owner}/{repo}/contents"]
    expect(bare?.get?.operationId).toBe("repoGetContentsList")
    expect(bare?.post?.operationId).toBe("repoChangeFiles")
    expect(bare?.put).toBeUndefined()
    expect(document.paths["/api/v1/repos/{owner}/{repo}/git/refs"]?.get?.operationId).toBe("repoListAllGitRefs")
    // … and they are served.
    const owner = await createUser(hearth)
    const made = await request(hearth, "POST", "/user/repos", basic(owner.name), { name: "surface", auto_init: true })
    expect(made.status).toBe(201)
    const listing = await request(hearth, "GET", `/repos/${owner.name}/surface/contents`, basic(owner.name))
    expect(listing.status).toBe(200)
    expect(Array.isArray(await json(listing))).toBe(true)
    const refs = await request(hearth, "GET", `/repos/${owner.name}/surface/git/refs`, basic(owner.name))
    expect(refs.status).toBe(200)
    expect((await json(refs)).map((r: { ref: string }) => r.ref)).toContain("refs/heads/main")
  })
})

describe("against Forgejo's API", () => {
  it("keeps every operation Hearth had, and prints what Forgejo has that Hearth does not yet", (context) => {
    const hearthOps = operations(document.paths, "/api/v1")
    if (process.env.API_SURFACE_WRITE === "1") {
      const lines = [...hearthOps.keys()].sort()
      writeFileSync(KNOWN, `# Hearth's API operations under /api/v1 (test/api-surface.test.ts)\n${lines.join("\n")}\n`)
    }
    const known = readFileSync(KNOWN, "utf8")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
    const gone = known.filter((key) => !hearthOps.has(key))
    expect(gone, "operations Hearth served before and no longer lists").toEqual([])
    const added = [...hearthOps.keys()].filter((key) => !known.includes(key)).sort()
    if (added.length > 0) console.log(`New operations, to add to test/api-surface.txt:\n${added.join("\n")}`)

    if (!existsSync(swaggerPath)) return context.skip("Forgejo's swagger.v1.json is not beside the project")
    const forgejo = operations(JSON.parse(readFileSync(swaggerPath, "utf8")).paths, "")
    const missing: Array<string> = []
    const actions: Array<string> = []
    for (const [key, operationId] of forgejo) {
      if (hearthOps.has(FORGEJO_QUIRKS[key] ?? key)) continue
      if (isActions(key)) actions.push(operationId)
      else missing.push(`${key} (${operationId})`)
    }
    console.log(
      [
        `Forgejo operations: ${forgejo.size}; Hearth has ${forgejo.size - missing.length - actions.length}.`,
        `Not provided (Forgejo Actions): ${actions.sort().join(", ")}`,
        `Missing (${missing.length}):`,
        ...missing.sort()
      ].join("\n")
    )
  })
})
