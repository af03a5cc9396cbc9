import { assert, describe, it } from "@effect/vitest"
import { resolveHome, sandboxFolders, statePaths } from "@prbox/domain"

describe("resolveHome", () => {
  const cases: ReadonlyArray<readonly [string, { PRBOX_HOME?: string }, string, string]> = [
    ["PRBOX_HOME wins", { PRBOX_HOME: "/srv/p" }, "/root", "/srv/p"],
    ["unset: ~/.prbox", {}, "/home/ann", "/home/ann/.prbox"],
    ["empty counts as unset", { PRBOX_HOME: "" }, "/home/ann", "/home/ann/.prbox"],
    ["a trailing slash on the user's home", {}, "/home/ann/", "/home/ann/.prbox"]
  ]
  for (const [name, env, userHome, expected] of cases) {
    it(name, () => assert.strictEqual(resolveHome(env, userHome), expected))
  }
})

describe("statePaths", () => {
  it("lays every path out under the home", () => {
    const paths = statePaths("/h/")
    assert.deepStrictEqual(
      [
        paths.config,
        paths.database,
        paths.mirrors,
        paths.sandbox("abc").workspace,
        paths.sandbox("abc").home,
        paths.socket,
        paths.lock,
        paths.daemonLog,
        paths.compileCache,
        paths.codeServer
      ],
      [
        "/h/config.json",
        "/h/prbox.db",
        "/h/mirrors",
        "/h/sandboxes/abc/sealed/workspace",
        "/h/sandboxes/abc/sealed/home",
        "/h/run/prboxd.sock",
        "/h/run/prboxd.lock",
        "/h/logs/prboxd.log",
        "/h/cache/node-compile",
        "/h/code-server"
      ]
    )
  })
})

describe("sandboxFolders", () => {
  const paths = statePaths("/h")
  const sealed = {
    root: "/h/sandboxes/abc",
    sealed: "/h/sandboxes/abc/sealed",
    workspace: "/h/sandboxes/abc/sealed/workspace",
    home: "/h/sandboxes/abc/sealed/home",
    sockets: "/h/sandboxes/abc/ssh"
  }
  const cases: ReadonlyArray<readonly [string, string | null, unknown]> = [
    ["a new sandbox (no workspace recorded yet): the sealed layout", null, sealed],
    ["a row that records the sealed workspace", "/h/sandboxes/abc/sealed/workspace", sealed],
    [
      "a row that records the sealed workspace under another spelling of the home keeps it",
      "/var/h/sandboxes/abc/sealed/workspace",
      {
        root: "/var/h/sandboxes/abc",
        sealed: "/var/h/sandboxes/abc/sealed",
        workspace: "/var/h/sandboxes/abc/sealed/workspace",
        home: "/var/h/sandboxes/abc/sealed/home",
        sockets: "/var/h/sandboxes/abc/ssh"
      }
    ],
    [
      "a row made before the sealed layout keeps its folders, unsealed",
      "/h/workspaces/abc",
      {
        root: "/h/workspaces/abc",
        sealed: undefined,
        workspace: "/h/workspaces/abc",
        home: "/h/homes/abc",
        sockets: undefined
      }
    ]
  ]
  for (const [name, workspacePath, expected] of cases) {
    it(name, () => assert.deepStrictEqual(sandboxFolders(paths, "abc", workspacePath), expected))
  }
})
