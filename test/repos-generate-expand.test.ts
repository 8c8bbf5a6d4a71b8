// Forgejo's template expansion as pure functions (src/repos/Generate.ts): Go's os.Expand rules with
// Forgejo's mapping (an unknown name becomes the name), bytes that are not UTF-8 kept, file names
// sanitized, the transformers, and the template file's globs.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: Forgejo's template variables, `${NAME}` as text
import { describe, expect, it } from "vitest"
import { expandContent, expandPath, osExpand, TRANSFORMERS, templateGlobs } from "../src/repos/Generate.ts"

const map = new Map([
  ["A", "x"],
  ["REPO_DESCRIPTION", "../up/c:d"]
])
const lookup = (name: string) => map.get(name) ?? name

describe("osExpand", () => {
  it("follows Go's os.Expand with Forgejo's mapping", () => {
    expect(osExpand("$A ${A} $$A $B ${B}", lookup)).toBe("x x $A B B")
    expect(osExpand("a$", lookup)).toBe("a$") // a final dollar stays
    expect(osExpand("$ a", lookup)).toBe("$ a") // no name: the dollar stays
    expect(osExpand("${}b", lookup)).toBe("b") // bad syntax is eaten
    expect(osExpand("${A", lookup)).toBe("A") // "${" eaten, the rest kept
    expect(osExpand("$1x ${*}", lookup)).toBe("1x *") // one-character special names
    expect(osExpand("no dollars", lookup)).toBe("no dollars")
  })

  it("keeps bytes that are not UTF-8, and writes values as UTF-8", () => {
    const bytes = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(" $A")])
    expect(Buffer.from(expandContent(bytes, new Map([["A", "é"]])))).toEqual(
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(" é")])
    )
  })

  it("sanitizes values in paths as Forgejo's fileNameSanitize", () => {
    expect(expandPath("docs/$REPO_DESCRIPTION.md", map)).toBe("docs/__up_c_d.md")
  })
})

describe("transformers", () => {
  const of = (value: string) => Object.fromEntries(TRANSFORMERS.map(([name, f]) => [name, f(value)]))
  it("turns a name into each case", () => {
    expect(of("my-Cool_repo")).toEqual({
      SNAKE: "my_cool_repo",
      KEBAB: "my-cool-repo",
      CAMEL: "myCoolRepo",
      PASCAL: "MyCoolRepo",
      LOWER: "my-cool_repo",
      UPPER: "MY-COOL_REPO",
      TITLE: "My-Cool_repo"
    })
    expect(of("HTTPServer2").SNAKE).toBe("http_server2")
  })
})

describe("templateGlobs", () => {
  it("skips comments, blank lines and bad globs; * stays within a directory, ** does not", () => {
    const globs = templateGlobs("# c\n\n  *.md \r\n**.go\n[bad\n")
    expect(globs).toHaveLength(2)
    const matches = (path: string) => globs.some((re) => re.test(path))
    expect(matches("README.md")).toBe(true)
    expect(matches("docs/README.md")).toBe(false)
    expect(matches("cmd/tool/main.go")).toBe(true)
  })
})
