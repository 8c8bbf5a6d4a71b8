// A repository generated from a template (issue 23 item 6): POST
// /repos/{template_owner}/{template_repo}/generate with Forgejo's variable expansion in the files
// `.forgejo/template` names, the chosen items copied, and Forgejo's refusals — none of which
// leaves anything behind. Also: every member of Forgejo's `Repository` is answered.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the files hold Forgejo's template variables, `${NAME}` as text

import { readFileSync } from "node:fs"
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger, swaggerPath } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const authed = (user: string) => hearth.base.replace("http://", `http://${user}:password123@`)

/** Pushes `files` (path → content, or [content, mode]) as one commit to `owner/name`'s main. */
const pushFiles = async (owner: string, name: string, files: Record<string, string | [string, "755"]>) => {
  const dir = await mkdtemp(join(work, "src-"))
  await gitIn(dir, ["init", "-q", "-b", "main"])
  for (const [path, value] of Object.entries(files)) {
    const [content, mode] = typeof value === "string" ? [value, undefined] : value
    await mkdir(join(dir, path, ".."), { recursive: true })
    await writeFile(join(dir, path), content, mode === "755" ? { mode: 0o755 } : {})
  }
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["commit", "-q", "-m", "template"])
  await gitIn(dir, ["push", "-q", `${authed(owner)}/${owner}/${name}.git`, "main"])
}

const generate = (user: string, template: string, body: Record<string, unknown>) =>
  request(hearth, "POST", `/repos/${template}/generate`, basic(user), body)

const README = [
  "name=$REPO_NAME owner=$REPO_OWNER tname=$TEMPLATE_NAME towner=$TEMPLATE_OWNER",
  "desc=$REPO_DESCRIPTION tdesc=${TEMPLATE_DESCRIPTION}",
  "link=$REPO_LINK tlink=$TEMPLATE_LINK",
  "https=$REPO_HTTPS_URL thttps=$TEMPLATE_HTTPS_URL",
  "snake=${REPO_NAME_SNAKE} kebab=${REPO_NAME_KEBAB} camel=${REPO_NAME_CAMEL} pascal=${REPO_NAME_PASCAL}",
  "upper=${REPO_NAME_UPPER} lower=${REPO_NAME_LOWER} title=${REPO_NAME_TITLE} owner_upper=${REPO_OWNER_UPPER}",
  "template_snake=${TEMPLATE_NAME_SNAKE} year=$YEAR",
  "unknown=$NOPE escaped=$$REPO_NAME"
].join("\n")

beforeAll(async () => {
  // API commits are signed (as a generated repository's first commit must be, INITIAL_COMMIT).
  hearth = await startHearth({
    "repository.signing": { SIGNING_KEY: "default", FORMAT: "ssh", INITIAL_COMMIT: "always" }
  })
  work = await mkdtemp(join(tmpdir(), "hearth-generate-"))
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "chief", isAdmin: true })
  expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: "acme" })).status).toBe(201)

  const created = await request(hearth, "POST", "/user/repos", basic("alice"), {
    name: "starter-Kit",
    description: "A starter",
    template: true
  })
  expect(created.status).toBe(201)
  expect((await json(created)).template).toBe(true)
  await pushFiles("alice", "starter-Kit", {
    ".forgejo/template": "# files to expand\nREADME.md\npkg/*\n\n[unclosed\n",
    "README.md": README,
    "pkg/${REPO_NAME_PASCAL}.py": "class ${REPO_NAME_PASCAL}: pass\n",
    "keep.md": "stays $REPO_NAME\n",
    "bin/run.sh": ["#!/bin/sh\necho $REPO_NAME\n", "755"]
  })
  const api = (method: string, path: string, body: unknown) =>
    request(hearth, method, `/repos/alice/starter-Kit${path}`, basic("alice"), body)
  expect((await api("PUT", "/topics", { topics: ["starter", "kit"] })).status).toBe(204)
  const picture = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer()
  expect((await api("POST", "/avatar", { image: picture.toString("base64") })).status).toBe(204)
  expect((await api("POST", "/labels", { name: "bug", color: "#ee0701", description: "Broken" })).status).toBe(201)
  expect(
    (
      await api("POST", "/hooks", {
        type: "forgejo",
        config: { url: "http://127.0.0.1:9/hook", content_type: "json" },
        events: ["push"],
        active: true
      })
    ).status
  ).toBe(201)
  expect((await api("POST", "/branch_protections", { rule_name: "main", required_approvals: 1 })).status).toBe(201)

  // A plain repository, and a private template bob cannot see.
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "plain" })).status).toBe(201)
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "hidden", template: true, private: true }))
      .status
  ).toBe(201)
})
afterAll(async () => {
  await hearth?.close()
  if (work !== undefined) await rm(work, { recursive: true, force: true })
})

const exists = async (full: string) => (await request(hearth, "GET", `/repos/${full}`, basic("alice"))).status === 200

describe("POST /repos/{template_owner}/{template_repo}/generate", () => {
  it("commits the template's files once, expanded where .forgejo/template says, and copies the chosen items", async () => {
    const res = await generate("alice", "alice/starter-Kit", {
      owner: "alice",
      name: "fancy-Widget",
      description: "Shiny",
      git_content: true,
      topics: true,
      labels: true,
      webhooks: true,
      protected_branch: true,
      avatar: true
    })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expectSwagger(repo, "Repository")
    // Forgejo's GenerateAvatar: the template's picture (the same stored file).
    const template = await json(await request(hearth, "GET", "/repos/alice/starter-Kit", basic("alice")))
    expect(template.avatar_url).toMatch(/\/repo-avatars\/[0-9a-f]{64}$/)
    expect(repo.avatar_url).toBe(template.avatar_url)
    expect(repo.full_name).toBe("alice/fancy-Widget")
    expect(repo.empty).toBe(false)
    expect(repo.template).toBe(false)
    expect(repo.private).toBe(false)
    expect(repo.default_branch).toBe("main")
    expect(repo.topics).toEqual(expect.arrayContaining(["starter", "kit"]))
    expect(repo.permissions).toEqual({ admin: true, push: true, pull: true })

    // A real clone: one commit, "Initial commit".
    const clone = join(work, "fancy")
    await gitIn(work, ["clone", "-q", `${authed("alice")}/alice/fancy-Widget.git`, clone])
    expect(await gitIn(clone, ["log", "--format=%s|%an"])).toBe("Initial commit|alice")
    expect(await gitIn(clone, ["cat-file", "commit", "HEAD"])).toContain("gpgsig -----BEGIN SSH SIGNATURE-----")
    expect((await gitIn(clone, ["ls-files"])).split("\n").sort()).toEqual(
      ["README.md", "bin/run.sh", "keep.md", "pkg/FancyWidget.py"].sort()
    )
    const root = hearth.settings.server.ROOT_URL
    const subPath = new URL(root).pathname.replace(/\/$/, "")
    const year = new Date().getFullYear()
    expect(await readFile(join(clone, "README.md"), "utf8")).toBe(
      [
        "name=fancy-Widget owner=alice tname=starter-Kit towner=alice",
        "desc=Shiny tdesc=A starter",
        `link=${subPath}/alice/fancy-Widget tlink=${subPath}/alice/starter-Kit`,
        `https=${root}alice/fancy-Widget.git thttps=${root}alice/starter-Kit.git`,
        "snake=fancy_widget kebab=fancy-widget camel=fancyWidget pascal=FancyWidget",
        "upper=FANCY-WIDGET lower=fancy-widget title=Fancy-Widget owner_upper=ALICE",
        `template_snake=starter_kit year=${year}`,
        "unknown=NOPE escaped=$REPO_NAME"
      ].join("\n")
    )
    expect(await readFile(join(clone, "pkg/FancyWidget.py"), "utf8")).toBe("class FancyWidget: pass\n")
    // Files no glob names are copied as they are, with their mode.
    expect(await readFile(join(clone, "keep.md"), "utf8")).toBe("stays $REPO_NAME\n")
    expect(await readFile(join(clone, "bin/run.sh"), "utf8")).toBe("#!/bin/sh\necho $REPO_NAME\n")
    expect((await stat(join(clone, "bin/run.sh"))).mode & 0o111).not.toBe(0)

    const api = (path: string) => request(hearth, "GET", `/repos/alice/fancy-Widget${path}`, basic("alice"))
    const labels = await json(await api("/labels"))
    expect(labels.map((l: any) => [l.name, l.color, l.description])).toEqual([["bug", "ee0701", "Broken"]])
    const hooks = await json(await api("/hooks"))
    expect(hooks.map((h: any) => [h.type, h.config.url, h.events, h.active])).toEqual([
      ["forgejo", "http://127.0.0.1:9/hook", ["push"], true]
    ])
    const rules = await json(await api("/branch_protections"))
    expect(rules.map((r: any) => [r.rule_name, r.required_approvals])).toEqual([["main", 1]])
  })

  it("copies only what is chosen, into an organization the caller may create repositories in, privately", async () => {
    const res = await generate("alice", "alice/starter-Kit", {
      owner: "acme",
      name: "bare-bones",
      private: true,
      default_branch: "trunk",
      git_content: true
    })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expect(repo.full_name).toBe("acme/bare-bones")
    expect(repo.private).toBe(true)
    expect(repo.default_branch).toBe("trunk")
    expect(repo.topics).toEqual([])
    expect(repo.avatar_url).toBe("")
    const api = (path: string) => request(hearth, "GET", `/repos/acme/bare-bones${path}`, basic("alice"))
    expect(await json(await api("/labels"))).toEqual([])
    expect(await json(await api("/hooks"))).toEqual([])
    expect(await json(await api("/branch_protections"))).toEqual([])
    const readme = await json(await api("/contents/README.md?ref=trunk"))
    expect(Buffer.from(readme.content, "base64").toString("utf8")).toContain("name=bare-bones owner=acme")
  })

  it("lets a site administrator generate one for another user", async () => {
    const res = await generate("chief", "alice/starter-Kit", { owner: "bob", name: "for-bob", topics: true })
    expect(res.status).toBe(201)
    expect((await json(res)).full_name).toBe("bob/for-bob")
  })

  it("makes an empty repository with the items when the git content is not chosen", async () => {
    const res = await generate("alice", "alice/starter-Kit", { owner: "alice", name: "labels-only", labels: true })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expect(repo.empty).toBe(true)
    const labels = await json(await request(hearth, "GET", "/repos/alice/labels-only/labels", basic("alice")))
    expect(labels.map((l: any) => l.name)).toEqual(["bug"])
  })

  it("refuses what Forgejo refuses, and creates nothing", async () => {
    const item = { git_content: true, labels: true, topics: true }
    const cases: Array<[string, string, Record<string, unknown>, number, string | undefined]> = [
      ["alice", "alice/plain", { owner: "alice", name: "from-plain", ...item }, 422, "is not a template"],
      ["bob", "alice/hidden", { owner: "bob", name: "from-hidden", ...item }, 404, undefined],
      ["bob", "alice/starter-Kit", { owner: "acme", name: "in-acme", ...item }, 403, "not allowed"],
      ["bob", "alice/starter-Kit", { owner: "alice", name: "for-alice", ...item }, 403, "Only admin"],
      ["alice", "alice/starter-Kit", { owner: "alice", name: "fancy-Widget", ...item }, 409, "already exists"],
      ["alice", "alice/starter-Kit", { owner: "alice", name: "bad name!", ...item }, 422, undefined],
      ["alice", "alice/starter-Kit", { owner: "alice", name: "nothing-chosen" }, 422, "at least one"]
    ]
    for (const [user, template, body, status, message] of cases) {
      const res = await generate(user, template, body)
      expect([body.name, res.status]).toEqual([body.name, status])
      if (message !== undefined) expect((await json(res)).message).toContain(message)
    }
    for (const full of [
      "alice/from-plain",
      "bob/from-hidden",
      "acme/in-acme",
      "alice/for-alice",
      "alice/nothing-chosen"
    ])
      expect([full, await exists(full)]).toEqual([full, false])
    // The duplicate left the first one as it was.
    const labels = await json(await request(hearth, "GET", "/repos/alice/fancy-Widget/labels", basic("alice")))
    expect(labels).toHaveLength(1)
  })

  it("refuses a file whose expanded path cannot be used, before making anything", async () => {
    expect(
      (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "risky", template: true })).status
    ).toBe(201)
    await pushFiles("alice", "risky", {
      ".gitea/template": "**\n",
      "a/${REPO_DESCRIPTION}/b.txt": "x\n",
      "a/d": "a file\n"
    })
    const res = await generate("alice", "alice/risky", {
      owner: "alice",
      name: "risky-copy",
      description: ".git",
      git_content: true
    })
    expect(res.status).toBe(422)
    expect((await json(res)).message).toContain("a/.git/b.txt")
    expect(await exists("alice/risky-copy")).toBe(false)
    // A path that meets a file only shows when the commit is written, after the repository was
    // made: it goes again.
    const clash = await generate("alice", "alice/risky", {
      owner: "alice",
      name: "risky-clash",
      description: "d",
      git_content: true
    })
    expect(clash.status).toBe(422)
    expect((await json(clash)).message).toContain("a/d")
    expect(await exists("alice/risky-clash")).toBe(false)
    // With a usable value the same template works (and `.gitea/template` is honoured and dropped).
    const ok = await generate("alice", "alice/risky", {
      owner: "alice",
      name: "risky-ok",
      description: "e",
      git_content: true
    })
    expect(ok.status).toBe(201)
    const tree = await json(
      await request(hearth, "GET", "/repos/alice/risky-ok/git/trees/main?recursive=true", basic("alice"))
    )
    expect(tree.tree.filter((e: any) => e.type === "blob").map((e: any) => e.path)).toEqual(["a/d", "a/e/b.txt"])
  })

  it("lets PATCH make a repository a template", async () => {
    const res = await request(hearth, "PATCH", "/repos/alice/plain", basic("alice"), { template: true })
    expect(res.status).toBe(200)
    expect((await json(res)).template).toBe(true)
  })
})

describe("Repository JSON", () => {
  it("answers every member of Forgejo's Repository (external_tracker/wiki only with such units)", async () => {
    const swagger = JSON.parse(readFileSync(swaggerPath, "utf8"))
    // Forgejo leaves these out (`omitempty`) unless the repository uses an external tracker or
    // wiki, which Hearth does not offer.
    const omitted = new Set(["external_tracker", "external_wiki"])
    // Hearth's own member (Schema.ts says why).
    const hearthOnly = ["retarget_children_on_merge"]
    const expected = [
      ...Object.keys(swagger.definitions.Repository.properties).filter((k) => !omitted.has(k)),
      ...hearthOnly
    ].sort()
    const repo = await json(await request(hearth, "GET", "/repos/alice/starter-Kit", basic("alice")))
    expect(Object.keys(repo).sort()).toEqual(expected)
  })
})
