// Creating a repository with `auto_init` (issue 3 item 3): the initial commit with README.md,
// .gitignore and LICENSE from the templates, made through the repository's entity; a bad template
// name creates nothing.
import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth

const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const bare = (owner: string, name: string, args: ReadonlyArray<string>) =>
  new Promise<string>((done, fail) =>
    execFile("git", ["--git-dir", dirOf(owner, name), ...args], { env: gitEnv() }, (error, stdout, stderr) =>
      error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  )

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice", fullName: "Alice Liddell" })
  await createUser(hearth, { username: "bob" })
  expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: "wonder" })).status).toBe(201)
})
afterAll(async () => {
  await hearth?.close()
})

describe("auto_init", () => {
  it("commits the default README on the default branch and answers a non-empty repository", async () => {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
      name: "hello",
      description: "Says hello",
      auto_init: true
    })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expectSwagger(repo, "Repository")
    expect(repo.empty).toBe(false)
    expect(repo.default_branch).toBe("main")
    expect(repo.size).toBeGreaterThan(0)
    expect(await bare("alice", "hello", ["ls-tree", "-r", "--name-only", "main"])).toBe("README.md")
    expect(await bare("alice", "hello", ["show", "main:README.md"])).toBe("# hello\n\nSays hello")
    expect(await bare("alice", "hello", ["log", "--format=%s|%an <%ae>", "main"])).toBe(
      "Initial commit|Alice Liddell <alice@example.com>"
    )
    expect(await bare("alice", "hello", ["symbolic-ref", "HEAD"])).toBe("refs/heads/main")
    // Readable through the API right away.
    const readme = await request(hearth, "GET", "/repos/alice/hello/contents/README.md", basic("alice"))
    expect(readme.status).toBe(200)
  })

  it("adds the chosen gitignores and license, on the chosen default branch", async () => {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
      name: "full",
      auto_init: true,
      gitignores: "Node,Python",
      license: "MIT",
      default_branch: "trunk"
    })
    expect(res.status).toBe(201)
    expect((await json(res)).default_branch).toBe("trunk")
    expect(await bare("alice", "full", ["ls-tree", "-r", "--name-only", "trunk"])).toBe(
      [".gitignore", "LICENSE", "README.md"].join("\n")
    )
    const gitignore = await bare("alice", "full", ["show", "trunk:.gitignore"])
    expect(gitignore).toContain("# ---> Node")
    expect(gitignore).toContain("# ---> Python")
    expect(gitignore).toContain("node_modules/")
    const license = await bare("alice", "full", ["show", "trunk:LICENSE"])
    expect(license).toContain("MIT License")
    expect(license).toContain(`Copyright (c) ${new Date().getUTCFullYear()} alice`)
    expect(await bare("alice", "full", ["symbolic-ref", "HEAD"])).toBe("refs/heads/trunk")
  })

  it("makes the creator the author of an organization repository's first commit", async () => {
    const res = await request(hearth, "POST", "/orgs/wonder/repos", basic("alice"), {
      name: "org-init",
      auto_init: true
    })
    expect(res.status).toBe(201)
    expect(await bare("wonder", "org-init", ["log", "--format=%an", "main"])).toBe("Alice Liddell")
  })

  it("refuses an unknown readme (400), gitignore, license or label set (422) and creates nothing", async () => {
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ readme: "Fancy" }, 400, "readme template does not exist, available templates: [Default]"],
      [{ gitignores: "Node,Cobol" }, 422, "Cobol"],
      [{ license: "Nope-1.0" }, 422, "Nope-1.0"],
      [{ issue_labels: "Nope" }, 422, "Nope"]
    ]
    for (const [extra, status, message] of cases) {
      const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
        name: "refused",
        auto_init: true,
        ...extra
      })
      expect(res.status, JSON.stringify(extra)).toBe(status)
      expect((await json(res)).message).toContain(message)
      expect((await request(hearth, "GET", "/repos/alice/refused", basic("alice"))).status).toBe(404)
      expect(existsSync(dirOf("alice", "refused"))).toBe(false)
    }
  })

  it("ignores the templates without auto_init: the repository is created empty", async () => {
    const res = await request(hearth, "POST", "/user/repos", basic("bob"), {
      name: "plain",
      gitignores: "Node",
      license: "MIT"
    })
    expect(res.status).toBe(201)
    expect((await json(res)).empty).toBe(true)
    expect(await bare("bob", "plain", ["for-each-ref"])).toBe("")
  })
})
