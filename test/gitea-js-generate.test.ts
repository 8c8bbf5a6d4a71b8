// gitea-js (npm) generates a repository from a template as a client would: `repos.generateRepo`
// with the template's git content and labels, and Forgejo's 422 when no item is chosen (gitea-js
// throws the response of a non-2xx answer).
import { giteaApi } from "gitea-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createToken, createUser, type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let alice: ReturnType<typeof giteaApi>

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  alice = giteaApi(hearth.base, { token: await createToken(hearth, "alice") })
  const template = (await alice.user.createCurrentUserRepo({ name: "tpl", auto_init: true, template: true })).data
  expect(template.template).toBe(true)
  await alice.repos.issueCreateLabel("alice", "tpl", { name: "bug", color: "#ee0701" })
}, 60_000)
afterAll(async () => {
  await hearth?.close()
})

describe("gitea-js repos.generateRepo", () => {
  it("makes a repository from the template's content and labels", async () => {
    const made = (
      await alice.repos.generateRepo("alice", "tpl", { owner: "alice", name: "made", git_content: true, labels: true })
    ).data
    expect(made.full_name).toBe("alice/made")
    expect(made.empty).toBe(false)
    expect(made.template).toBe(false)
    const readme = (await alice.repos.repoGetContents("alice", "made", "README.md")).data as { content?: string }
    expect(Buffer.from(readme.content ?? "", "base64").toString("utf8")).toContain("# tpl")
    const labels = (await alice.repos.issueListLabels("alice", "made")).data
    expect(labels.map((l) => l.name)).toEqual(["bug"])
  })

  it("gets Forgejo's 422 when nothing is chosen", async () => {
    const status = await alice.repos.generateRepo("alice", "tpl", { owner: "alice", name: "none" }).then(
      (r) => r.status,
      (e: { status: number }) => e.status
    )
    expect(status).toBe(422)
  })
})
