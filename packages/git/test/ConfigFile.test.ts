import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  hasOriginUrl,
  quotedConfigValue,
  withOnlyOriginUrl,
  withOriginSection,
  withOriginUrl
} from "../src/ConfigFile.ts"
import { gitSync } from "./helpers.ts"

const root = mkdtempSync(NodePath.join(tmpdir(), "prbox-config-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

let count = 0
/** A fresh repository (bare like a mirror, or a clone like a workspace) and its config file. */
const repository = (kind: "mirror" | "clone") => {
  const dir = NodePath.join(root, `${kind}-${++count}`)
  if (kind === "mirror") gitSync(root, "init", "--bare", "--quiet", dir)
  else gitSync(root, "clone", "--quiet", "--no-checkout", NodePath.join(root, "source.git"), dir)
  return NodePath.join(dir, kind === "mirror" ? "config" : ".git/config")
}
gitSync(root, "init", "--bare", "--quiet", NodePath.join(root, "source.git"))

// What git reads back is the test: each URL goes through the edit and out of `git config`.
const URLS = [
  ["https", "https://github.com/o/r.git"],
  ["scp-like ssh", "git@github.com:o/r.git"],
  ["a path with spaces", "/srv/my repos/r.git"],
  ["quotes and backslashes", '/srv/a "b" \\c\\.git'],
  ["comment characters", "https://host/r.git#frag;x"],
  ["a tab and trailing spaces", "/srv/a\tb  "],
  ["leading spaces", "  /srv/r.git"]
] as const

describe("a repository's origin URL edited in its config file (read back by git)", () => {
  it.each(URLS)("a workspace's origin replaced: %s", (_name, url) => {
    const file = repository("clone")
    const edited = withOriginUrl(readFileSync(file, "utf8"), url)
    expect(edited).toBeDefined()
    writeFileSync(file, edited ?? "")
    expect(gitSync(NodePath.dirname(file), "config", "--get-all", "remote.origin.url")).toBe(url.trim())
    // The fetch refspec and the other sections stay as git wrote them.
    expect(gitSync(NodePath.dirname(file), "config", "--get", "remote.origin.fetch")).toBe(
      "+refs/heads/*:refs/remotes/origin/*"
    )
    expect(hasOriginUrl(edited ?? "", url)).toBe(true)
  })

  it.each(URLS)("a new mirror's origin added: %s", (_name, url) => {
    const file = repository("mirror")
    const edited = withOriginSection(readFileSync(file, "utf8"), url)
    writeFileSync(file, edited ?? "")
    expect(gitSync(NodePath.dirname(file), "config", "--get-all", "remote.origin.url")).toBe(url.trim())
    expect(gitSync(NodePath.dirname(file), "config", "--get", "core.bare")).toBe("true")
  })

  it.each(URLS)("a bare clone's origin cut down to its URL: %s", (_name, url) => {
    const dir = NodePath.join(root, `bare-clone-${++count}`)
    gitSync(root, "clone", "--quiet", "--bare", "--no-tags", NodePath.join(root, "source.git"), dir)
    const file = NodePath.join(dir, "config")
    const edited = withOnlyOriginUrl(readFileSync(file, "utf8"), url)
    expect(edited).toBeDefined()
    writeFileSync(file, edited ?? "")
    expect(gitSync(dir, "config", "--get-regexp", "^remote\\.")).toBe(`remote.origin.url ${url}`.trim())
    expect(gitSync(dir, "config", "--get", "core.bare")).toBe("true")
    expect(hasOriginUrl(edited ?? "", url)).toBe(true)
  })

  it("the sections after an origin stay", () => {
    const config = '[remote "origin"]\n\turl = /a\n\ttagOpt = --no-tags\n[core]\n\tbare = true\n'
    expect(withOnlyOriginUrl(config, "/b")).toBe('[core]\n\tbare = true\n[remote "origin"]\n\turl = "/b"\n')
  })

  it.each(URLS)("an origin git itself wrote is recognised: %s", (_name, url) => {
    const file = repository("mirror")
    gitSync(NodePath.dirname(file), "config", "remote.origin.url", url)
    const config = readFileSync(file, "utf8")
    expect(hasOriginUrl(config, url)).toBe(true)
    expect(hasOriginUrl(config, `${url}x`)).toBe(false)
  })
})

describe("what the edit leaves to git", () => {
  it.each([
    ["a line break", "https://host/r.git\nx"],
    ["a carriage return", "https://host/r.git\rx"],
    ["a NUL", "https://host/r.git\0x"]
  ])("a URL with %s cannot be written", (_name, url) => {
    expect(quotedConfigValue(url)).toBeUndefined()
    expect(withOriginUrl('[remote "origin"]\n\turl = /m.git\n', url)).toBeUndefined()
    expect(withOriginSection("[core]\n\tbare = true\n", url)).toBeUndefined()
  })

  it.each([
    ["no origin section", "[core]\n\tbare = true\n"],
    ["two origin sections", '[remote "origin"]\n\turl = a\n[remote "origin"]\n\turl = b\n'],
    ["two origin URLs", '[remote "origin"]\n\turl = a\n\turl = b\n']
  ])("a config with %s is not edited", (name, config) => {
    expect(withOriginUrl(config, "https://host/r.git")).toBeUndefined()
    // A clone's one origin section is rewritten whole, whatever URLs it had.
    if (name !== "two origin URLs") expect(withOnlyOriginUrl(config, "https://host/r.git")).toBeUndefined()
    expect(hasOriginUrl(config, "a")).toBe(false)
  })

  it("a mirror that already has an origin does not get a second one", () => {
    expect(withOriginSection('[remote "origin"]\n\turl = a\n', "b")).toBeUndefined()
  })
})
