// The quota evaluation (src/quota/Evaluate.ts), case by case as Forgejo's unit tests
// (models/quota/quota_rule_test.go, quota_group_test.go, used_test.go, v13+ semantics).
import { describe, expect, it } from "vitest"
import {
  evaluateGroup,
  evaluateGroups,
  evaluateRule,
  type Group,
  NOTHING_USED,
  parseSubjects,
  type Rule,
  SUBJECTS,
  type Subject,
  type Used,
  usageOf,
  verdictWithoutUsage
} from "../src/quota/Evaluate.ts"

/** size:all … size:assets:wiki: Forgejo's LimitSubjectFirst to LimitSubjectLast (`none` left out). */
const EVERY = SUBJECTS.filter((s) => s !== "none")

const used = (
  changes: Partial<{
    public: number
    private: number
    lfs: number
    issues: number
    releases: number
    artifacts: number
    packages: number
  }>
): Used => ({
  repos: { public: changes.public ?? 0, private: changes.private ?? 0 },
  lfs: changes.lfs ?? 0,
  attachments: { issues: changes.issues ?? 0, releases: changes.releases ?? 0 },
  artifacts: changes.artifacts ?? 0,
  packages: changes.packages ?? 0
})

const fullyUsed = used({
  public: 1024,
  private: 1024,
  lfs: 1024,
  issues: 1024,
  releases: 1024,
  artifacts: 1024,
  packages: 1024
})
const partiallyUsed = used({ public: 1024, releases: 1024 })

const rule = (limit: number, ...subjects: Array<Subject>): Rule => ({ name: "", limit, subjects })
const group = (...rules: Array<Rule>): Group => ({ name: "", rules })

/** Usage of `value` in exactly the category of `subject`; undefined where no category is (Forgejo's setUsed). */
const usedOnly = (subject: Subject, value: number): Used | undefined => {
  switch (subject) {
    case "size:repos:public":
      return used({ public: value })
    case "size:repos:private":
      return used({ private: value })
    case "size:git:lfs":
      return used({ lfs: value })
    case "size:assets:attachments:issues":
      return used({ issues: value })
    case "size:assets:attachments:releases":
      return used({ releases: value })
    case "size:assets:artifacts":
      return used({ artifacts: value })
    case "size:assets:packages:all":
      return used({ packages: value })
    default:
      return undefined
  }
}

describe("subjects", () => {
  it("are Forgejo's fourteen, and anything else is refused by name", () => {
    expect(SUBJECTS).toHaveLength(14)
    expect(parseSubjects(["size:all", "none", "size:assets:wiki"])).toEqual({
      subjects: ["size:all", "none", "size:assets:wiki"]
    })
    expect(parseSubjects(["size:all", "size:repo:all", "x"])).toEqual({ unknown: "size:repo:all" })
    expect(parseSubjects(["SIZE:ALL"])).toEqual({ unknown: "SIZE:ALL" })
  })
})

describe("a rule (TestQuotaRuleNoMatch)", () => {
  it("does not match a subject it does not cover, whatever its limit", () => {
    for (const limit of [-1, 0, 1024, 1024 * 1024]) {
      expect(
        evaluateRule(rule(limit, "size:assets:attachments:all"), used({ public: 4096 }), "size:repos:all")
      ).toEqual({ match: false, allow: false })
    }
  })
})

describe("a rule on its own subject (TestQuotaRuleDirectEvaluation)", () => {
  const run = (limit: number, value: number, expected: boolean) => {
    for (const subject of EVERY) {
      const usage = usedOnly(subject, value)
      if (usage === undefined) continue
      expect(evaluateRule(rule(limit, subject), usage, subject), `${subject} limit ${limit} used ${value}`).toEqual({
        match: true,
        allow: expected
      })
    }
  }
  it("limit 0 denies any usage, 0 included", () => {
    run(0, 0, false)
    run(0, 512, false)
  })
  it("-1 allows any usage", () => run(-1, 512, true))
  it("a limit allows usage below it and denies usage above it", () => {
    run(1024, 512, true)
    run(1024, 2048, false)
  })
  it("denies usage equal to the limit (strictly below, since Forgejo v13)", () => {
    run(1024, 1024, false)
    run(1024, 1023, true)
  })
})

describe("a rule with several subjects (TestQuotaRuleCombined)", () => {
  const usage = used({ public: 4096, lfs: 256, issues: 2048, releases: 256, packages: 2560 })
  const subjects: Array<Subject> = ["size:git:lfs", "size:assets:attachments:releases", "size:assets:packages:all"]
  for (const [name, limit, allow] of [
    ["unlimited", -1, true],
    ["limit-allow", 1024 * 1024, true],
    ["limit-deny", 1024, false]
  ] as const) {
    it(`${name}: matches exactly its subjects, and sums their usage`, () => {
      for (const subject of EVERY) {
        const verdict = evaluateRule(rule(limit, ...subjects), usage, subject)
        expect(verdict, subject).toEqual(
          subjects.includes(subject) ? { match: true, allow } : { match: false, allow: false }
        )
      }
    })
  }
  it("sums all of its subjects, not only the one checked", () => {
    // 256 + 256 + 2560 = 3072: a limit of 3000 denies even the lfs check (256 alone would pass).
    expect(evaluateRule(rule(3000, ...subjects), usage, "size:git:lfs")).toEqual({ match: true, allow: false })
    expect(evaluateRule(rule(3073, ...subjects), usage, "size:git:lfs")).toEqual({ match: true, allow: true })
  })
})

describe("a size:all rule (TestQuotaRuleSizeAll)", () => {
  const cases: ReadonlyArray<readonly [string, Used, ReadonlyArray<readonly [number, boolean]>]> = [
    [
      "empty",
      NOTHING_USED,
      [
        [-1, true],
        [1024 * 1024, true],
        [5 * 1024, true],
        [0, false]
      ]
    ],
    [
      "partial",
      partiallyUsed,
      [
        [-1, true],
        [1024 * 1024, true],
        [5 * 1024, true],
        [0, false]
      ]
    ],
    [
      "full",
      fullyUsed,
      [
        [-1, true],
        [1024 * 1024, true],
        [5 * 1024, false],
        [0, false]
      ]
    ]
  ]
  for (const [name, usage, limits] of cases) {
    it(name, () => {
      for (const [limit, allow] of limits) {
        expect(evaluateRule(rule(limit, "size:all"), usage, "size:all"), `limit ${limit}`).toEqual({
          match: true,
          allow
        })
      }
    })
  }
})

describe("parent subjects (v13+: a rule on a parent covers its children)", () => {
  it("walks up: repos:public → repos:all → git:all → all", () => {
    const usage = used({ public: 10, private: 20, lfs: 5 })
    expect(evaluateRule(rule(100, "size:repos:all"), usage, "size:repos:public")).toEqual({ match: true, allow: true })
    expect(evaluateRule(rule(30, "size:repos:all"), usage, "size:repos:private")).toEqual({ match: true, allow: false })
    expect(evaluateRule(rule(36, "size:git:all"), usage, "size:repos:public")).toEqual({ match: true, allow: true })
    expect(evaluateRule(rule(35, "size:all"), usage, "size:repos:private")).toEqual({ match: true, allow: false })
    expect(evaluateRule(rule(100, "size:all"), usage, "size:assets:attachments:issues")).toEqual({
      match: true,
      allow: true
    })
  })
  it("never walks down: a rule on a child says nothing of its parent", () => {
    expect(evaluateRule(rule(100, "size:repos:public"), NOTHING_USED, "size:repos:all")).toEqual({
      match: false,
      allow: false
    })
    expect(evaluateRule(rule(100, "size:repos:all"), NOTHING_USED, "size:git:all")).toEqual({
      match: false,
      allow: false
    })
  })
  it("keeps the siblings apart: repos:all does not cover git:lfs, assets:all does not cover repos", () => {
    expect(evaluateRule(rule(100, "size:repos:all"), NOTHING_USED, "size:git:lfs").match).toBe(false)
    expect(evaluateRule(rule(100, "size:assets:all"), NOTHING_USED, "size:repos:public").match).toBe(false)
    expect(evaluateRule(rule(100, "size:assets:all"), NOTHING_USED, "size:assets:wiki").match).toBe(true)
  })
})

describe("usage per subject (TestQuotaUsedTotals)", () => {
  it("sums the categories of each subject; the wiki counts nothing", () => {
    const usage = used({ public: 2, private: 3, lfs: 7, issues: 11, releases: 13, artifacts: 17, packages: 19 })
    expect(usageOf(usage, "size:repos:all")).toBe(5)
    expect(usageOf(usage, "size:git:all")).toBe(12)
    expect(usageOf(usage, "size:assets:attachments:all")).toBe(24)
    expect(usageOf(usage, "size:assets:all")).toBe(60)
    expect(usageOf(usage, "size:all")).toBe(72)
    expect(usageOf(usage, "size:repos:public")).toBe(2)
    expect(usageOf(usage, "size:repos:private")).toBe(3)
    expect(usageOf(usage, "size:git:lfs")).toBe(7)
    expect(usageOf(usage, "size:assets:attachments:issues")).toBe(11)
    expect(usageOf(usage, "size:assets:attachments:releases")).toBe(13)
    expect(usageOf(usage, "size:assets:artifacts")).toBe(17)
    expect(usageOf(usage, "size:assets:packages:all")).toBe(19)
    expect(usageOf(usage, "size:assets:wiki")).toBe(0)
    expect(usageOf(usage, "none")).toBe(0)
  })
})

describe("a group", () => {
  it("needs every matching rule to allow (TestQuotaGroupAllRulesMustAllow)", () => {
    const verdict = evaluateGroup(group(rule(-1, "size:all"), rule(0, "size:all")), used({ public: 1024 }), "size:all")
    expect(verdict).toEqual({ match: true, allow: false })
  })

  it("judges each subject by the rules covering it (TestQuotaGroupRuleScenario1)", () => {
    const g = group(
      rule(1024, "size:assets:attachments:releases", "size:git:lfs", "size:assets:packages:all"),
      rule(0, "size:git:lfs")
    )
    const usage = used({ releases: 512, packages: 256, lfs: 16 })
    expect(evaluateGroup(g, usage, "size:assets:attachments:releases")).toEqual({ match: true, allow: true })
    expect(evaluateGroup(g, usage, "size:assets:packages:all")).toEqual({ match: true, allow: true })
    expect(evaluateGroup(g, usage, "size:git:lfs")).toEqual({ match: true, allow: false })
    expect(evaluateGroup(g, usage, "size:all")).toEqual({ match: false, allow: false })
  })

  it("has no opinion on a subject none of its rules covers (TestQuotaGroupRuleCombination)", () => {
    const g = group(rule(4096, "size:repos:all"), rule(0, "size:assets:packages:all"))
    const usage = used({ public: 1024, packages: 1024 })
    expect(evaluateGroup(g, usage, "size:git:lfs")).toEqual({ match: false, allow: false })
    expect(evaluateGroup(g, usage, "size:repos:all")).toEqual({ match: true, allow: true })
    expect(evaluateGroup(g, usage, "size:assets:packages:all")).toEqual({ match: true, allow: false })
  })

  it("without rules has no opinion", () => {
    expect(evaluateGroup(group(), NOTHING_USED, "size:all")).toEqual({ match: false, allow: false })
  })
})

describe("an account's groups", () => {
  it("pass when any group matches and allows (TestQuotaGroupListsRequireOnlyOneAllow)", () => {
    const groups = [group(rule(0, "size:all")), group(rule(-1, "size:all"))]
    expect(evaluateGroups(groups, used({ public: 1024 }), "size:all", -1)).toBe(true)
  })

  it("fail when every group denies (TestQuotaGroupListAllDeny)", () => {
    const groups = [group(rule(0, "size:all")), group(rule(1024, "size:all"))]
    expect(evaluateGroups(groups, used({ public: 2048 }), "size:all", -1)).toBe(false)
  })

  it("fail when no group has an opinion: once an account has groups, what they do not cover is denied", () => {
    expect(evaluateGroups([group(rule(-1, "size:assets:all"))], NOTHING_USED, "size:repos:all", -1)).toBe(false)
    expect(evaluateGroups([group()], NOTHING_USED, "size:repos:all", -1)).toBe(false)
  })

  it("fall back to [quota.default] TOTAL on size:all when there are none (TestQuotaDefaultGroup)", () => {
    for (const [limit, allow] of [
      [-1, true],
      [1024 * 1024, true],
      [1024, false]
    ] as const) {
      for (const subject of EVERY) {
        expect(evaluateGroups([], used({ public: 2048 }), subject, limit), `${subject} TOTAL ${limit}`).toBe(allow)
      }
    }
  })

  it("ignore [quota.default] TOTAL once the account has a group", () => {
    expect(evaluateGroups([group(rule(-1, "size:all"))], used({ public: 2048 }), "size:all", 0)).toBe(true)
  })
})

describe("a verdict that does not depend on the usage (no usage read needed)", () => {
  it("is known for an unlimited group, a limit of 0 and an uncovered subject; unknown for a finite limit", () => {
    expect(verdictWithoutUsage([group(rule(-1, "size:all"))], "size:repos:all", -1)).toBe(true)
    expect(
      verdictWithoutUsage([group(rule(1024, "size:repos:all")), group(rule(-1, "size:all"))], "size:repos:all", -1)
    ).toBe(true)
    expect(verdictWithoutUsage([group(rule(0, "size:all"))], "size:repos:all", -1)).toBe(false)
    expect(verdictWithoutUsage([group(rule(-1, "size:assets:all"))], "size:repos:all", -1)).toBe(false)
    expect(verdictWithoutUsage([group(rule(1024, "size:repos:all"))], "size:repos:all", -1)).toBeUndefined()
    expect(verdictWithoutUsage([], "size:repos:all", -1)).toBe(true)
    expect(verdictWithoutUsage([], "size:repos:all", 0)).toBe(false)
    expect(verdictWithoutUsage([], "size:repos:all", 1000)).toBeUndefined()
    // The wiki counts nothing, so a finite limit on it is decided without the usage.
    expect(verdictWithoutUsage([group(rule(1, "size:assets:wiki"))], "size:assets:wiki", -1)).toBe(true)
  })

  it("always agrees with the full evaluation when it is known", () => {
    let state = 7
    const random = (n: number) => (state = (state * 1103515245 + 12345) % 2 ** 31) % n
    const limits = [-1, 0, 1, 100, 5000, 1 << 20]
    const usages = [NOTHING_USED, partiallyUsed, fullyUsed, used({ public: 50, private: 70, lfs: 3, packages: 9000 })]
    for (let i = 0; i < 2000; i++) {
      const groups = Array.from({ length: random(3) }, () =>
        group(
          ...Array.from({ length: random(3) }, () =>
            rule(
              limits[random(limits.length)]!,
              ...Array.from({ length: 1 + random(2) }, () => SUBJECTS[random(SUBJECTS.length)]!)
            )
          )
        )
      )
      const subject = SUBJECTS[random(SUBJECTS.length)]!
      const total = limits[random(limits.length)]!
      const known = verdictWithoutUsage(groups, subject, total)
      if (known === undefined) continue
      for (const usage of usages) expect(evaluateGroups(groups, usage, subject, total)).toBe(known)
    }
  })
})
