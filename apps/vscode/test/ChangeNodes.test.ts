import { SandboxId } from "@prbox/domain"
import { describe, expect, it } from "vitest"
import { CHANGES_SHOWN, changedFileNode, changedFileNodes } from "../src/ChangeNodes.ts"
import { diffSides, parseSideUri, sideUri } from "../src/Changes.ts"

const id = SandboxId.make("aaaaaaaaaaa1")

describe("changed files in the tree", () => {
  it.each([
    ["a file at the root", { path: "README.md", change: "modified" }, "README.md", "", "diff-modified"],
    ["a file in a folder", { path: "src/app/main.ts", change: "added" }, "main.ts", "src/app", "diff-added"],
    [
      "a rename says where from",
      { path: "docs/new.md", change: "renamed", previousPath: "old.md" },
      "new.md",
      "docs ← old.md",
      "diff-renamed"
    ],
    ["a deletion", { path: "gone.txt", change: "deleted" }, "gone.txt", "", "diff-removed"],
    ["control characters in a path are not shown", { path: "a\u001b[31mb", change: "added" }, "ab", "", "diff-added"]
  ] as const)("%s", (_name, file, label, description, icon) => {
    const node = changedFileNode(id, file)
    expect([node.label, node.description, node.icon.id]).toEqual([label, description, icon])
    expect(node.file).toEqual(file)
    expect(node.contextValue).toBe(`change.${file.change}`)
  })

  it("says when the PR changes nothing, and leaves a long list's tail to the command line", () => {
    expect(changedFileNodes(id, []).map((node) => node.label)).toEqual(["No changes"])
    const many = Array.from({ length: CHANGES_SHOWN + 2 }, (_, at) => ({ path: `f${at}`, change: "added" as const }))
    const nodes = changedFileNodes(id, many)
    expect(nodes).toHaveLength(CHANGES_SHOWN + 1)
    expect(nodes.at(-1)).toMatchObject({ kind: "note", label: "2 more files" })
  })
})

describe("a diff view's sides", () => {
  it("the base of a renamed file is its previous path; the head is the PR's", () => {
    const { left, right } = diffSides(id, { path: "b.ts", change: "renamed", previousPath: "a.ts" })
    expect([left, right]).toEqual([
      { sandboxId: id, side: "base", path: "a.ts" },
      { sandboxId: id, side: "head", path: "b.ts" }
    ])
  })

  it("a side survives its URI, and a URI this extension did not make names no side", () => {
    const side = { sandboxId: id, side: "head", path: "src/a b&c.ts" } as const
    const uri = sideUri(side)
    expect(uri.scheme).toBe("prbox-pr")
    expect(parseSideUri(uri.path, uri.query)).toEqual(side)
    expect(parseSideUri("/x", "id=aaaaaaaaaaa1&side=workspace")).toBeUndefined()
    expect(parseSideUri("/x", "id=../etc&side=head")).toBeUndefined()
    expect(parseSideUri("x", "id=aaaaaaaaaaa1&side=head")).toBeUndefined()
  })
})
