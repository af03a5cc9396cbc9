import { describe, expect, it } from "vitest"
import { inWorkspace, workspacePath } from "../src/WorkspacePath.ts"

describe("workspacePath", () => {
  it.each([
    ["src/a.ts", "src/a.ts"],
    ["./src//a.ts", "src/a.ts"],
    ["src/../README.md", "README.md"],
    ["a/b/../../c", "c"],
    [".", "."],
    ["", "."],
    ["src/", "src"],
    ["..foo/bar", "..foo/bar"],
    ["a/...", "a/..."]
  ])("%j is inside as %j", (input, path) => {
    expect(workspacePath(input)).toEqual({ _tag: "Inside", path })
  })

  it.each([
    ["../../etc/passwd", "climbs out"],
    ["..", "climbs out"],
    ["src/../../x", "climbs out"],
    ["/etc/passwd", "absolute"],
    ["~/x", "absolute"],
    ["a\0b", "NUL"],
    ["a".repeat(4097), "at most"]
  ])("%j is refused (%s)", (input, reason) => {
    const check = workspacePath(input)
    expect(check._tag).toBe("Refused")
    if (check._tag === "Refused") expect(check.reason).toContain(reason)
  })
})

describe("inWorkspace", () => {
  it.each([
    ["/workspaces/repo", ".", "/workspaces/repo"],
    ["/workspaces/repo", "src/a.ts", "/workspaces/repo/src/a.ts"],
    ["/workspaces/repo/", "a", "/workspaces/repo/a"]
  ])("%j + %j is %j", (folder, relative, path) => {
    expect(inWorkspace(folder, relative)).toBe(path)
  })
})
