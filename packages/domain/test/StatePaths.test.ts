import { assert, describe, it } from "@effect/vitest"
import { resolveHome, statePaths } from "@prbox/domain"

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
        paths.workspace("abc"),
        paths.sandboxHome("abc"),
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
        "/h/workspaces/abc",
        "/h/homes/abc",
        "/h/run/prboxd.sock",
        "/h/run/prboxd.lock",
        "/h/logs/prboxd.log",
        "/h/cache/node-compile",
        "/h/code-server"
      ]
    )
  })
})
