// Issue templates and the issue config (CONTRACT-ISSUES §15) over real HTTP, read from the default
// branch of a real git repository: markdown templates with front matter and YAML issue forms from
// Forgejo's directories in its order, invalid files skipped, labels as a list or a comma-separated
// string, `ref` made a full ref; /issue_config (defaults, contact links, an invalid file) and
// /issue_config/validate; who may read them (private repositories 404, the repository scope).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

const b64 = (text: string) => Buffer.from(text).toString("base64")
const commit = async (repo: string, files: Record<string, string>) => {
  const res = await request(hearth, "POST", `/repos/owner/${repo}/contents`, basic("owner"), {
    files: Object.entries(files).map(([path, text]) => ({ operation: "create", path, content: b64(text) }))
  })
  expect(res.status).toBe(201)
}

const BUG = `---
name: Bug report
about: Something is broken
title: "[bug] "
labels: bug, needs triage
ref: main
---
## What happened?
`
const FORM = `name: Feature
description: Ask for something new
labels: [enhancement]
ref: refs/tags/v1
body:
  - type: markdown
    attributes:
      value: Thanks for asking!
  - type: textarea
    id: wish
    attributes:
      label: What do you wish for?
    validations:
      required: true
  - type: dropdown
    id: area
    attributes:
      label: Area
      options: [api, web]
  - type: checkboxes
    id: terms
    attributes:
      label: Terms
      options:
        - label: I searched first
`

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["owner", "stranger", "reader"]) await createUser(hearth, { username })
  for (const [name, priv] of [
    ["tpl", false],
    ["secret", true],
    ["empty", false],
    ["badconfig", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name, private: priv })).status).toBe(201)
  }
  expect(
    (await request(hearth, "PUT", "/repos/owner/secret/collaborators/reader", basic("owner"), { permission: "read" }))
      .status
  ).toBe(204)
  await commit("tpl", {
    "README.md": "# tpl\n",
    ".gitea/ISSUE_TEMPLATE/bug.md": BUG,
    ".forgejo/ISSUE_TEMPLATE/feature.yaml": FORM,
    // The same file in another directory counts again.
    ".github/ISSUE_TEMPLATE/bug.md": BUG,
    // Invalid ones are skipped: no front matter, no about, a form without body, a bad field, bad YAML.
    ".github/ISSUE_TEMPLATE/plain.md": "just text\n",
    ".github/ISSUE_TEMPLATE/noabout.md": "---\nname: x\n---\nbody\n",
    ".github/ISSUE_TEMPLATE/nobody.yml": "name: y\nabout: z\n",
    ".github/ISSUE_TEMPLATE/badfield.yml": "name: y\nabout: z\nbody:\n  - type: input\n    id: a\n",
    ".github/ISSUE_TEMPLATE/broken.yaml": "name: [unclosed\n",
    // Not a template: another extension.
    ".github/ISSUE_TEMPLATE/notes.txt": "name: n\n",
    ".gitea/ISSUE_TEMPLATE/config.yml": `blank_issues_enabled: false
contact_links:
  - name: Forum
    url: https://forum.example.com/
    about: Ask questions there
`
  })
  await commit("secret", { ".gitea/ISSUE_TEMPLATE/bug.md": BUG })
  await commit("badconfig", {
    ".github/ISSUE_TEMPLATE/config.yaml": "contact_links:\n  - name: Forum\n    url: not a url\n    about: x\n"
  })
}, 90_000)
afterAll(() => hearth?.close())

describe("issue templates", () => {
  it("reads markdown templates and YAML forms from the default branch, in Forgejo's directory order", async () => {
    const res = await request(hearth, "GET", "/repos/owner/tpl/issue_templates")
    expect(res.status).toBe(200)
    const templates = await json(res)
    expect(templates.map((t: any) => t.file_name)).toEqual(["feature.yaml", "bug.md", "bug.md"])
    expect(templates[1]).toEqual({
      name: "Bug report",
      title: "[bug] ",
      about: "Something is broken",
      labels: ["bug", "needs triage"],
      ref: "refs/heads/main",
      content: "## What happened?\n",
      body: [],
      file_name: "bug.md"
    })
    expect(templates[0]).toMatchObject({
      name: "Feature",
      about: "Ask for something new",
      labels: ["enhancement"],
      ref: "refs/tags/v1",
      content: ""
    })
    expect(templates[0].body.map((f: any) => [f.type, f.id])).toEqual([
      ["markdown", ""],
      ["textarea", "wish"],
      ["dropdown", "area"],
      ["checkboxes", "terms"]
    ])
    expect(templates[0].body[1]).toMatchObject({
      attributes: { label: "What do you wish for?" },
      validations: { required: true },
      visible: ["form", "content"]
    })
  })

  it("answers [] for an empty repository, and follows who may read the repository", async () => {
    expect(await json(await request(hearth, "GET", "/repos/owner/empty/issue_templates"))).toEqual([])
    expect((await request(hearth, "GET", "/repos/owner/secret/issue_templates")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/owner/secret/issue_templates", basic("stranger"))).status).toBe(404)
    const forReader = await request(hearth, "GET", "/repos/owner/secret/issue_templates", basic("reader"))
    expect(forReader.status).toBe(200)
    expect((await json(forReader)).length).toBe(1)
    // The issues unit does not matter; the repository scope does.
    expect((await request(hearth, "PATCH", "/repos/owner/tpl", basic("owner"), { has_issues: false })).status).toBe(200)
    expect((await request(hearth, "GET", "/repos/owner/tpl/issue_templates")).status).toBe(200)
    expect((await request(hearth, "PATCH", "/repos/owner/tpl", basic("owner"), { has_issues: true })).status).toBe(200)
    const issueOnly = `token ${await createToken(hearth, "reader", ["read:issue"])}`
    expect((await request(hearth, "GET", "/repos/owner/secret/issue_templates", issueOnly)).status).toBe(403)
    const repoRead = `token ${await createToken(hearth, "reader", ["read:repository"])}`
    expect((await request(hearth, "GET", "/repos/owner/secret/issue_config", repoRead)).status).toBe(200)
  })
})

describe("issue config", () => {
  it("reads config.yml, defaults without one, and validates", async () => {
    expect(await json(await request(hearth, "GET", "/repos/owner/tpl/issue_config"))).toEqual({
      blank_issues_enabled: false,
      contact_links: [{ name: "Forum", url: "https://forum.example.com/", about: "Ask questions there" }]
    })
    expect(await json(await request(hearth, "GET", "/repos/owner/tpl/issue_config/validate"))).toEqual({
      valid: true,
      message: ""
    })
    for (const repo of ["empty", "secret"]) {
      expect(await json(await request(hearth, "GET", `/repos/owner/${repo}/issue_config`, basic("owner")))).toEqual({
        blank_issues_enabled: true,
        contact_links: []
      })
    }
  })

  it("falls back to the default for an invalid file and says what is wrong", async () => {
    expect(await json(await request(hearth, "GET", "/repos/owner/badconfig/issue_config"))).toEqual({
      blank_issues_enabled: true,
      contact_links: []
    })
    expect(await json(await request(hearth, "GET", "/repos/owner/badconfig/issue_config/validate"))).toEqual({
      valid: false,
      message: "not a url is not a valid URL"
    })
    expect((await request(hearth, "GET", "/repos/owner/secret/issue_config/validate", basic("stranger"))).status).toBe(
      404
    )
  })
})
