import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { homedir, tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { isLocalOpenInput, normalizeOpenInput, openRequest, parseOpenInput } from "../src/index.ts"

const base = mkdtempSync(join(tmpdir(), "prbox-input-"))
mkdirSync(join(base, "repo.git"))
mkdirSync(join(base, "o", "r"), { recursive: true })
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe("normalizeOpenInput: what `open` sends for what the user typed", () => {
  const cases: ReadonlyArray<readonly [name: string, input: string, expected: string]> = [
    ["a PR URL as typed", "https://github.com/o/r/pull/7", "https://github.com/o/r/pull/7"],
    ["an ssh URL as typed", "ssh://git@host/o/r.git", "ssh://git@host/o/r.git"],
    ["owner/repo#N as typed", "o/r#7", "o/r#7"],
    ["scp-like git@host:path as typed (not a local path)", "git@host:o/r.git", "git@host:o/r.git"],
    ["an existing relative path, made absolute", "repo.git", join(base, "repo.git")],
    ["./ and ../ resolved", "./o/../repo.git", join(base, "repo.git")],
    ["an absolute path, even one that does not exist", "/nowhere/x.git", "/nowhere/x.git"],
    ["~ is the user's home", "~/code/x.git", join(homedir(), "code", "x.git")],
    ["a relative path that does not exist, as typed (the daemon says why)", "missing.git", "missing.git"],
    // A directory named like owner/repo does not turn a PR reference into a path: only `#N` makes it one.
    ["owner/repo that is also a directory, as a path", "o/r", join(base, "o", "r")]
  ]
  for (const [name, input, expected] of cases) {
    it(name, () => expect(normalizeOpenInput(input, base)).toBe(expected))
  }

  it("openRequest adds --pr and --ref only when given", () => {
    expect(openRequest("repo.git", base, { pr: 3, ref: undefined })).toEqual({ input: join(base, "repo.git"), pr: 3 })
    expect(openRequest("o/r#7", base)).toEqual({ input: "o/r#7" })
  })
})

describe("parseOpenInput: the extension's one-line form of `prbox open`", () => {
  const cases: ReadonlyArray<readonly [text: string, expected: unknown]> = [
    ["  o/r#7 ", { _tag: "ok", request: { input: "o/r#7" } }],
    [
      "repo.git --pr 2 --ref refs/heads/x",
      { _tag: "ok", request: { input: join(base, "repo.git"), pr: 2, ref: "refs/heads/x" } }
    ],
    ["repo.git --pr=2", { _tag: "ok", request: { input: join(base, "repo.git"), pr: 2 } }],
    ["repo.git --pr 0", { _tag: "invalid", message: '--pr needs a pull request number, not "0"' }],
    ["repo.git --ref", { _tag: "invalid", message: "--ref needs a value" }],
    ["", { _tag: "invalid", message: "type a pull request URL, owner/repo#N, or a git URL or path with --pr N" }],
    ["a#1 b#2", { _tag: "invalid", message: "one pull request at a time (also got: b#2)" }]
  ]
  for (const [text, expected] of cases) {
    it(JSON.stringify(text), () => expect(parseOpenInput(text, base)).toEqual(expected))
  }
})

describe("isLocalOpenInput: what reaches a repository on this machine", () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ["https://github.com/o/r/pull/1", false],
    ["o/r#12", false],
    ["git@github.com:o/r.git", false],
    ["github.com:o/r.git", false],
    ["ssh://git@git.example.com:2222/o/r.git", false],
    ["https://gitlab.example.com/g/sub/r/-/merge_requests/3", false],
    ["codecommit::eu-west-1://profile@repo", false],
    ["/home/me/private", true],
    ["./repo", true],
    ["../../other", true],
    ["repo", true],
    ["~/src/repo", true],
    ["file:///home/me/private", true],
    ["FILE:/home/me/private", true],
    ["ssh://localhost/home/me/private.git", true],
    ["https://127.0.0.1:3000/o/r.git", true],
    ["git://[::1]/r.git", true],
    ["me@localhost:private.git", true],
    ["127.0.0.1:private.git", true],
    ["http://localhost./r.git", true],
    // However this machine is spelled: names, numbers, the private networks.
    ["http://x.localhost:3000/o/r.git", true],
    ["ssh://127.1/r.git", true],
    ["git://127.1/r.git", true],
    ["127.1:path", true],
    ["ssh://2130706433/r.git", true],
    ["ssh://0x7f000001/r.git", true],
    ["ssh://0177.0.0.1/r.git", true],
    ["https://localhost.localdomain/r.git", true],
    ["https://ip6-localhost/r.git", true],
    ["https://[::ffff:7f00:1]/r.git", true],
    ["https://[fd00::1]/r.git", true],
    ["https://[fe80::1]/r.git", true],
    ["https://172.17.0.1/r.git", true],
    ["https://10.1.2.3/r.git", true],
    ["https://192.168.1.10/r.git", true],
    ["https://169.254.169.254/r.git", true],
    ["http://gitserver/r.git", true],
    ["https://172.32.0.1/r.git", false],
    ["https://8.8.8.8/r.git", false],
    ["https://[2001:db8::1]/r.git", false],
    ["https://localhost.example.com/r.git", false]
  ]
  for (const [input, local] of cases) {
    it(`${input}: ${local ? "local" : "remote"}`, () => {
      expect(isLocalOpenInput(input)).toBe(local)
    })
  }
})
