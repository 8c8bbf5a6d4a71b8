// Prints what failed in a vitest JSON report (`--reporter=json --outputFile.json=F`), briefly: the
// file, the test and the first lines of each failure message. .ci/run prints it at the very end,
// where a reader of a long CI log (or of only its last lines) sees it first.
//
//   node infra/ci/failures.ts REPORT.json [LABEL]
import { existsSync, readFileSync } from "node:fs"
import { relative } from "node:path"

interface Assertion {
  readonly fullName: string
  readonly status: string
  readonly failureMessages: ReadonlyArray<string>
}
interface FileResult {
  readonly name: string
  readonly status: string
  readonly message?: string
  readonly assertionResults: ReadonlyArray<Assertion>
}

const MESSAGE_LINES = 12
const LINE_WIDTH = 240

const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

/** The first lines of a failure: the message itself, not the stack beneath it. */
const firstLines = (message: string) =>
  plain(message)
    .split("\n")
    .filter((line) => !/^\s+at /.test(line) && line.trim() !== "")
    .slice(0, MESSAGE_LINES)
    .map((line) => `      ${line.length > LINE_WIDTH ? `${line.slice(0, LINE_WIDTH)}…` : line}`)

const [path, label = "tests"] = process.argv.slice(2)
if (path === undefined || !existsSync(path)) {
  console.log(`${label}: no report (the run stopped before writing one)`)
} else {
  const report = JSON.parse(readFileSync(path, "utf8")) as { testResults: ReadonlyArray<FileResult> }
  const lines: Array<string> = []
  for (const file of report.testResults) {
    const failed = file.assertionResults.filter((a) => a.status === "failed")
    if (file.status !== "failed" && failed.length === 0) continue
    lines.push(`  ${relative(process.cwd(), file.name)}`)
    if (failed.length === 0 && file.message) lines.push(...firstLines(file.message))
    for (const assertion of failed) {
      lines.push(`    × ${assertion.fullName}`)
      lines.push(...firstLines(assertion.failureMessages.join("\n")))
    }
  }
  console.log(lines.length === 0 ? `${label}: no failures` : `${label}: what failed\n${lines.join("\n")}`)
}
