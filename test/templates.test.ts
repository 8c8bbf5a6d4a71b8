// Repository templates: Forgejo's gitignore, license and label template endpoints over real HTTP,
// and the initial files of an auto-initialised repository (README.md, .gitignore, LICENSE),
// with the .gitignore checked by the real git client.

import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import * as Errors from "../src/http/Errors.ts"
import {
  checkCreateOptions,
  gitignoreTemplates,
  labelsOf,
  labelTemplates,
  licenseTemplates,
  renderInitialFiles,
  TemplateNotFound,
  toApiError
} from "../src/templates/Service.ts"
import { createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

const spdxText = (key: string): string =>
  (createRequire(import.meta.url)(`spdx-license-list/licenses/${key}.json`) as { licenseText: string }).licenseText

const base = {
  repoName: "hello",
  description: "A test repo",
  owner: "alice",
  cloneUrl: "http://x/alice/hello.git",
  year: 2031
}

const render = (options: Partial<Parameters<typeof renderInitialFiles>[0]>) =>
  Effect.runPromise(renderInitialFiles({ ...base, ...options }))

const fileOf = (files: ReadonlyArray<{ path: string; content: string }>, path: string) => {
  const file = files.find((f) => f.path === path)
  if (file === undefined) throw new Error(`no ${path} among ${files.map((f) => f.path).join(", ")}`)
  return file.content
}

/** The TemplateNotFound an effect fails with (the test fails if it succeeds or dies). */
const failure = async (effect: Effect.Effect<unknown, TemplateNotFound>): Promise<TemplateNotFound> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a TemplateNotFound failure, got success")
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (error === undefined || !(error.error instanceof TemplateNotFound))
    throw new Error(`unexpected: ${String(exit.cause)}`)
  return error.error
}

describe("renderInitialFiles", () => {
  it("writes only README.md from the Default template when nothing else is asked for", async () => {
    const files = await render({})
    expect(files).toEqual([{ path: "README.md", content: "# hello\n\nA test repo\n" }])
    expect(await render({ readme: "" })).toEqual(files)
    expect(await render({ readme: "Default" })).toEqual(files)
  })

  it("puts the description into the README as written, without expanding braces inside it", async () => {
    const files = await render({ description: "uses {Name} and $& literally" })
    expect(fileOf(files, "README.md")).toBe("# hello\n\nuses {Name} and $& literally\n")
  })

  it("answers an unknown readme with Forgejo's 400 message; the readme name is exact", async () => {
    for (const readme of ["Fancy", "default"]) {
      const error = await failure(renderInitialFiles({ ...base, readme }))
      expect(error.status).toBe(400)
      expect(error.message).toBe("readme template does not exist, available templates: [Default]")
      const api = toApiError(error)
      expect(api).toBeInstanceOf(Errors.BadRequest)
      expect(api.message).toBe(error.message)
    }
  })

  it("combines several gitignores, each under a header, matched without regard to case, each once", async () => {
    const files = await render({ gitignores: "Node, python,NODE,,macos" })
    const gitignore = fileOf(files, ".gitignore")
    const headers = gitignore.split("\n").filter((l) => l.startsWith("# ---> "))
    expect(headers).toEqual(["# ---> Node", "# ---> Python", "# ---> macOS"])
    expect(gitignore).toContain("node_modules/")
    expect(gitignore).toContain("__pycache__/")
    expect(gitignore).toContain(".DS_Store")
    expect(gitignore.endsWith("\n")).toBe(true)
    expect(files.map((f) => f.path)).toEqual(["README.md", ".gitignore"])
  })

  it("writes no .gitignore for an empty list", async () => {
    expect((await render({ gitignores: "" })).map((f) => f.path)).toEqual(["README.md"])
  })

  it("answers an unknown gitignore with 422 naming it and the available ones", async () => {
    const error = await failure(renderInitialFiles({ ...base, gitignores: "Node,Cobol" }))
    expect(error.status).toBe(422)
    expect(error.kind).toBe("gitignore")
    expect(error.message).toContain('"Cobol"')
    expect(error.message).toContain("Node")
    expect(toApiError(error)).toBeInstanceOf(Errors.ValidationFailed)
  })

  it("fills the MIT license's year and holder and leaves the rest of the SPDX text exact", async () => {
    const license = fileOf(await render({ license: "mit" }), "LICENSE")
    expect(license).toContain("Copyright (c) 2031 alice\n")
    expect(license).not.toContain("<year>")
    expect(license).not.toContain("<copyright holders>")
    expect(license).toBe(`${spdxText("MIT").replace("<year>", "2031").replace("<copyright holders>", "alice")}\n`)
  })

  it("fills the placeholders of Apache-2.0, the BSD licenses and the GPL family's notice", async () => {
    const apache = fileOf(await render({ license: "Apache-2.0" }), "LICENSE")
    expect(apache).toContain("Copyright 2031 alice")
    expect(apache).not.toMatch(/\[yyyy\]|\[name of copyright owner\]/)

    const bsd3 = fileOf(await render({ license: "BSD-3-Clause" }), "LICENSE")
    expect(bsd3).toContain("Copyright (c) 2031 alice.")
    expect(bsd3).not.toContain("<owner>")

    const gpl = fileOf(await render({ license: "GPL-3.0-or-later" }), "LICENSE")
    expect(gpl).toContain("Copyright (C) 2031  alice")
    expect(gpl).toContain("hello  Copyright (C) 2031  alice")
    expect(gpl).not.toMatch(/<year>|<name of author>|<program>|<one line to give/)
    // Links in angle brackets are part of the text, not placeholders.
    expect(gpl).toContain("<https://www.gnu.org/licenses/>")
  })

  it("replaces the example copyright lines of ISC and 0BSD, and nothing else of their text", async () => {
    const isc = fileOf(await render({ license: "ISC" }), "LICENSE")
    expect(isc).toContain("Copyright (c) 2031 alice\n")
    expect(isc).not.toContain("Internet Systems Consortium")
    expect(isc).toContain("ISC DISCLAIMS ALL WARRANTIES")

    const zero = fileOf(await render({ license: "0BSD" }), "LICENSE")
    expect(zero.startsWith("Copyright (C) 2031 by alice\n")).toBe(true)
    expect(zero).toContain("THE AUTHOR DISCLAIMS ALL WARRANTIES")
    expect(zero).not.toContain("EMAIL")
  })

  it("never reads an owner name as a replacement pattern", async () => {
    const license = fileOf(await render({ license: "MIT", owner: "a$&b$1" }), "LICENSE")
    expect(license).toContain("Copyright (c) 2031 a$&b$1\n")
  })

  it("loads every offered license, and none keeps a year placeholder once filled", async () => {
    expect(licenseTemplates.length).toBeGreaterThanOrEqual(20)
    for (const key of licenseTemplates) {
      const license = fileOf(await render({ license: key }), "LICENSE")
      expect(license.length, key).toBeGreaterThan(500)
      expect(license, key).not.toMatch(/<year>|\[yyyy\]|\[year\]/)
    }
  })

  it("answers an unknown license with 422 naming it", async () => {
    const error = await failure(renderInitialFiles({ ...base, license: "WTFPL-9" }))
    expect(error.status).toBe(422)
    expect(error.message).toContain('license template "WTFPL-9" does not exist')
    expect(error.message).toContain("MIT")
  })

  it("writes README.md, .gitignore and LICENSE in that order", async () => {
    const files = await render({ gitignores: "Go", license: "MIT" })
    expect(files.map((f) => f.path)).toEqual(["README.md", ".gitignore", "LICENSE"])
  })
})

describe("checkCreateOptions", () => {
  it("checks readme, gitignores and license only when auto-initialising", async () => {
    await Effect.runPromise(
      checkCreateOptions({ autoInit: false, readme: "Nope", gitignores: "Nope", license: "Nope" })
    )
    expect((await failure(checkCreateOptions({ autoInit: true, readme: "Nope" }))).status).toBe(400)
    expect((await failure(checkCreateOptions({ autoInit: true, gitignores: "Nope" }))).kind).toBe("gitignore")
    expect((await failure(checkCreateOptions({ autoInit: true, license: "Nope" }))).kind).toBe("license")
    await Effect.runPromise(checkCreateOptions({ autoInit: true, readme: "", gitignores: "Rust", license: "" }))
  })

  it("checks the label set whether or not the repository is auto-initialised", async () => {
    const error = await failure(checkCreateOptions({ autoInit: false, issueLabels: "Fancy" }))
    expect(error.status).toBe(422)
    expect(error.message).toBe('label template "Fancy" does not exist, available templates: Advanced, Default')
    await Effect.runPromise(checkCreateOptions({ issueLabels: "advanced" }))
    await Effect.runPromise(checkCreateOptions({ issueLabels: "" }))
    const labels = await Effect.runPromise(labelsOf("Default"))
    expect(labels.map((l) => l.name)).toContain("bug")
  })
})

describe("gitignore templates with the real git client", () => {
  const git = (args: ReadonlyArray<string>, cwd: string) =>
    new Promise<number>((done) => {
      execFile("git", args as Array<string>, { cwd, env: gitEnv({}), timeout: 60_000 }, (error) =>
        done(error === null ? 0 : typeof error.code === "number" ? error.code : 1)
      )
    })

  let dir: string
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hearth-gitignore-"))
    expect(await git(["init", "-q", "."], dir)).toBe(0)
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  /** Which of `paths` the repository's .gitignore ignores, as git itself decides. */
  const ignored = async (paths: ReadonlyArray<string>) => {
    const out = await new Promise<string>((done, fail) => {
      const child = execFile(
        "git",
        ["check-ignore", "--no-index", "--stdin"],
        { cwd: dir, env: gitEnv({}) },
        (error, stdout, stderr) => (error === null || error.code === 1 ? done(stdout) : fail(new Error(stderr)))
      )
      child.stdin!.end(paths.join("\n") + "\n")
    })
    return out.split("\n").filter((l) => l !== "")
  }

  it("ignores what each template is for and keeps the files a project shares", async () => {
    const files = await render({ gitignores: gitignoreTemplates.join(",") })
    writeFileSync(join(dir, ".gitignore"), fileOf(files, ".gitignore"))
    mkdirSync(join(dir, "src"), { recursive: true })
    const wanted = [
      "node_modules/left-pad/index.js",
      "__pycache__/a.cpython-312.pyc",
      "target/debug/app",
      ".DS_Store",
      "Thumbs.db",
      ".vscode/ui.json",
      ".idea/workspace.xml",
      "#notes.org#",
      ".main.c.swp",
      "main.o",
      "terraform.tfstate",
      ".env"
    ]
    const kept = [
      "src/index.js",
      "src/main.rs",
      ".env.example",
      ".vscode/settings.json",
      "logo.svg",
      ".terraform.lock.hcl",
      "go.mod",
      "Cargo.toml",
      "package.json"
    ]
    const result = await ignored([...wanted, ...kept])
    expect(result.sort()).toEqual([...wanted].sort())
  })

  it("offers the usual names", () => {
    for (const name of [
      "Node",
      "Python",
      "Go",
      "Rust",
      "Java",
      "Kotlin",
      "C",
      "C++",
      "VisualStudio",
      "Ruby",
      "PHP",
      "Swift",
      "Haskell",
      "Elixir",
      "Dart",
      "Flutter",
      "Terraform",
      "Unity",
      "macOS",
      "Windows",
      "Linux",
      "JetBrains",
      "VisualStudioCode",
      "Vim",
      "Emacs",
      "TeX"
    ])
      expect(gitignoreTemplates).toContain(name)
  })
})

describe("template endpoints", () => {
  let hearth: Hearth

  beforeAll(async () => {
    hearth = await startHearth()
  })
  afterAll(async () => {
    await hearth?.close()
  })

  const get = (path: string, auth?: string) => request(hearth, "GET", path, auth)

  const expectNotFound = async (path: string) => {
    const res = await get(path)
    expect(res.status, path).toBe(404)
    expect(await res.text()).toBe("")
  }

  it("GET /gitignore/templates lists the names, to anyone", async () => {
    const res = await get("/gitignore/templates")
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toEqual([...gitignoreTemplates])
    expect(body).toContain("C++")
    expect(body).toContain("VisualStudioCode")
  })

  it("GET /gitignore/templates/{name} gives the name and source; case does not matter; unknown is 404", async () => {
    const res = await get("/gitignore/templates/Node")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "GitignoreTemplateInfo")
    expect(body.name).toBe("Node")
    expect(body.source).toContain("node_modules/")

    for (const path of ["/gitignore/templates/C++", "/gitignore/templates/C%2B%2B", "/gitignore/templates/c++"]) {
      const cpp = await json(await get(path))
      expect(cpp.name, path).toBe("C++")
    }
    await expectNotFound("/gitignore/templates/Cobol")
    await expectNotFound("/gitignore/templates/constructor")
  })

  it("GET /licenses lists SPDX keys with this server's own URL for each", async () => {
    const res = await get("/licenses")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "LicensesTemplateListEntry[]")
    expect(body.map((e: { key: string }) => e.key)).toEqual([...licenseTemplates])
    expect(body.slice(0, 2).map((e: { key: string }) => e.key)).toEqual(["Apache-2.0", "MIT"])
    const mit = body.find((e: { key: string }) => e.key === "MIT")
    expect(mit).toEqual({ key: "MIT", name: "MIT", url: `${hearth.base}/api/v1/licenses/MIT` })
    // The URL answers.
    const followed = await fetch(mit.url)
    expect(followed.status).toBe(200)
    expect((await json(followed)).key).toBe("MIT")
  })

  it("GET /licenses/{name} gives the unfilled SPDX text; unknown is 404", async () => {
    const res = await get("/licenses/GPL-3.0-only")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "LicenseTemplateInfo")
    expect(body.key).toBe("GPL-3.0-only")
    expect(body.name).toBe("GPL-3.0-only")
    expect(body.url).toBe(`${hearth.base}/api/v1/licenses/GPL-3.0-only`)
    expect(body.implementation.length).toBeGreaterThan(0)
    expect(body.body).toBe(`${spdxText("GPL-3.0-only")}\n`)
    expect(body.body).toContain("<year>")

    expect((await json(await get("/licenses/mit"))).key).toBe("MIT")
    await expectNotFound("/licenses/WTFPL")
    await expectNotFound("/licenses/toString")
  })

  it("GET /label/templates and /label/templates/{name} give the label sets; unknown is 404", async () => {
    const list = await get("/label/templates")
    expect(list.status).toBe(200)
    expect(await json(list)).toEqual([...labelTemplates])
    expect(labelTemplates).toEqual(["Advanced", "Default"])

    for (const name of labelTemplates) {
      const res = await get(`/label/templates/${name}`)
      expect(res.status).toBe(200)
      const labels = await json(res)
      expectSwagger(labels, "LabelTemplate[]")
      expect(labels.length).toBeGreaterThan(3)
      for (const label of labels) {
        expect(label.color).toMatch(/^[0-9a-f]{6}$/)
        expect(label.name.length).toBeGreaterThan(0)
        expect(label.description.length).toBeGreaterThan(0)
      }
      expect(new Set(labels.map((l: { name: string }) => l.name)).size).toBe(labels.length)
    }
    const advanced = await json(await get("/label/templates/advanced"))
    const bug = advanced.find((l: { name: string }) => l.name === "Kind/Bug")
    expect(bug).toMatchObject({ exclusive: true, color: "ee0701" })
    await expectNotFound("/label/templates/Fancy")
  })

  it("needs no token scope: a token limited to another category still reads the templates", async () => {
    await createUser(hearth, { username: "scoped" })
    const token = await createToken(hearth, "scoped", ["read:user"])
    for (const path of ["/gitignore/templates", "/licenses/MIT", "/label/templates/Default"]) {
      expect((await get(path, `token ${token}`)).status, path).toBe(200)
    }
  })

  it("is described in the served OpenAPI document", async () => {
    const doc = await json(await fetch(`${hearth.base}/api/swagger.v1.json`))
    for (const path of [
      "/gitignore/templates",
      "/gitignore/templates/{name}",
      "/licenses",
      "/licenses/{name}",
      "/label/templates",
      "/label/templates/{name}"
    ]) {
      expect(Object.keys(doc.paths), path).toContain(`/api/v1${path}`)
    }
  })
})
