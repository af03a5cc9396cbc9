import { SandboxId } from "@prbox/domain"
import { describe, expect, it } from "vitest"
import { viewOf } from "../../../packages/protocol/test/sandboxes.ts"
import { describe as describeSandbox, listText, terminalColumns } from "../src/Format.ts"
import { displayWidth, fitWidth } from "../src/TextWidth.ts"

/** `prbox ls` and `prbox status` from rows (the same functions print both paths' text; QuickPath.test.ts runs them). */

const now = 1_000_000 + 5 * 60_000
const title = "Make the parser accept trailing commas in every list the grammar has"

const rows = [
  viewOf({ id: SandboxId.make("aaaaaaaaaaa1"), title, author: "octocat", pullRequestState: "open" }),
  viewOf({ id: SandboxId.make("aaaaaaaaaaa2"), title: null, status: "stopped", url: null }),
  viewOf({
    id: SandboxId.make("aaaaaaaaaaa3"),
    title: "Drop the old API",
    pullRequestState: "merged",
    closedSeenAt: 2
  }),
  viewOf({ id: SandboxId.make("aaaaaaaaaaa4"), title: "Try a rewrite", pullRequestState: "closed", setupError: "x" })
]

const lineOf = (text: string, id: string): string => text.split("\n").find((line) => line.startsWith(id)) ?? ""

describe("prbox ls: the TITLE column", () => {
  it("is last, whole when stdout is not a terminal, and a dash when the title is unknown", () => {
    const text = listText(rows, true, now)
    expect(text.split("\n")[0]).toMatch(/^ID\s+PR\s+REPO\s+STATUS\s+ENV\s+AGE\s+URL\s+TITLE$/)
    expect(lineOf(text, "aaaaaaaaaaa1").endsWith(`  ${title}`)).toBe(true)
    expect(lineOf(text, "aaaaaaaaaaa2").endsWith("  —")).toBe(true)
  })

  it("is cut with … so that every line fits the terminal's width", () => {
    const whole = listText(rows, true, now)
    const columns = lineOf(whole, "aaaaaaaaaaa1").length - 20
    const text = listText(rows, true, now, columns)
    for (const line of text.split("\n")) expect(displayWidth(line), line).toBeLessThanOrEqual(columns)
    const cut = lineOf(text, "aaaaaaaaaaa1")
    expect(cut.endsWith("…")).toBe(true)
    expect(displayWidth(cut)).toBe(columns)
    expect(title.startsWith(cut.slice(cut.indexOf("Make"), -1))).toBe(true)
    // What fits is left whole.
    expect(lineOf(text, "aaaaaaaaaaa3").endsWith("  Drop the old API")).toBe(true)
  })

  it("keeps a few columns of the title on a terminal too narrow for the rest: the line wraps", () => {
    const cut = lineOf(listText(rows, true, now, 40), "aaaaaaaaaaa1")
    expect(cut.endsWith("  Make the pa…")).toBe(true)
  })

  it("marks merged and closed pull requests in STATUS, after the sandbox's own marks", () => {
    const text = listText(rows, true, now)
    expect(lineOf(text, "aaaaaaaaaaa1")).toMatch(/ running {2}/)
    expect(lineOf(text, "aaaaaaaaaaa3")).toContain(" running · merged ")
    expect(lineOf(text, "aaaaaaaaaaa4")).toContain(" running (setup failed) · closed ")
  })

  it("shows a title's control characters as spaces: a title cannot drive the terminal or break the table", () => {
    const hostile = viewOf({ title: "Fix\u001b]0;owned\u0007 the\nparser\u202e\t now" })
    const text = listText([hostile], true, now)
    expect(text.replaceAll("\n", "")).not.toMatch(/[\p{Cc}\u202e]/u)
    expect(text.split("\n")).toHaveLength(2)
    expect(text.endsWith("  Fix ]0;owned the parser now")).toBe(true)
  })
})

describe("the terminal's width", () => {
  it.each([
    [{ isTTY: true, columns: 80 }, 80],
    [{ isTTY: false, columns: 80 }, undefined],
    [{ columns: 80 }, undefined],
    [{ isTTY: true }, undefined],
    [{ isTTY: true, columns: 0 }, undefined]
  ])("%j → %s", (stdout, expected) => {
    expect(terminalColumns(stdout)).toBe(expected)
  })
})

describe("columns a text takes", () => {
  it.each([
    ["plain", 5],
    ["修正バグ", 8],
    ["fix 🐛 bug", 10],
    ["e\u0301te\u0301", 3],
    ["", 0]
  ])("%j takes %i", (text, width) => {
    expect(displayWidth(text)).toBe(width)
  })

  it.each([
    ["fits whole", "parser", 6, "parser"],
    ["cut, … in the last column", "parser", 5, "pars…"],
    ["a wide character never split", "修正バグ", 6, "修正…"],
    ["a wide character that would overflow is left out", "修正バグ", 5, "修正…"],
    ["combining marks stay with their letter", "e\u0301e\u0301e\u0301", 3, "e\u0301e\u0301e\u0301"],
    ["combining marks stay with their letter when cut", "e\u0301e\u0301e\u0301x", 3, "e\u0301e\u0301…"]
  ])("%s", (_, text, columns, expected) => {
    const fitted = fitWidth(text, columns)
    expect(fitted).toBe(expected)
    expect(displayWidth(fitted)).toBeLessThanOrEqual(columns)
  })
})

describe("prbox status: what the hosting service said", () => {
  it("shows title, author, the PR's state with when it was first seen closed, and the base branch", () => {
    const text = describeSandbox(
      viewOf({
        title,
        author: "octocat",
        pullRequestState: "merged",
        closedSeenAt: now - 3 * 3_600_000,
        baseRef: "main"
      }),
      now
    )
    expect(text).toContain(`\ntitle:         ${title}\n`)
    expect(text).toContain("\nauthor:        octocat\n")
    expect(text).toContain("\nPR state:      merged (first seen 3h ago)\n")
    expect(text).toContain("\nbase branch:   main\n")
    expect(describeSandbox(viewOf({ pullRequestState: "open" }), now)).toContain("\nPR state:      open\n")
  })

  it("leaves out what is not known", () => {
    const text = describeSandbox(viewOf({ title: null }), now)
    expect(text).not.toMatch(/^(title|author|PR state|base branch):/m)
  })
})

describe("prbox status: the configuration's settings left out", () => {
  const environment = {
    kind: "devcontainer" as const,
    path: ".devcontainer/devcontainer.json",
    image: "img:1",
    imageDigest: null
  }

  it("one line each, property and why", () => {
    const text = describeSandbox(
      viewOf({
        environment: {
          ...environment,
          ignored: [
            { property: "privileged", detail: "widens the container; add it to trustedRepositories" },
            { property: "mounts[0]", detail: "mounts storage from the host\u001b[31m" }
          ]
        }
      }),
      now
    )
    expect(text).toContain("\nleft out:      privileged: widens the container; add it to trustedRepositories\n")
    // Terminal control sequences never reach the terminal.
    const line = text.split("\n").find((one) => one.startsWith("left out:      mounts[0]:")) ?? ""
    expect(line).toContain("mounts storage from the host")
    expect(line).not.toContain("\u001b")
  })

  it("none left out (or a row from before the field), no line", () => {
    expect(describeSandbox(viewOf({ environment }), now)).not.toContain("left out:")
    expect(describeSandbox(viewOf({ environment: { ...environment, ignored: [] } }), now)).not.toContain("left out:")
  })
})
