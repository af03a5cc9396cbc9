import { homedir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { resolveSettings } from "../src/Settings.ts"

describe("settings", () => {
  it("default like the CLI: $PRBOX_HOME, else ~/.prbox; the socket in it; prbox on PATH", () => {
    expect(resolveSettings({}, { PRBOX_HOME: "/srv/prbox" })).toEqual({
      home: "/srv/prbox",
      socketPath: "/srv/prbox/run/prboxd.sock",
      cliPath: "prbox"
    })
    expect(resolveSettings({ home: "  ", socketPath: "", cliPath: "" }, {}).home).toBe(join(homedir(), ".prbox"))
  })

  it("take what the user set, with ~ expanded", () => {
    expect(resolveSettings({ home: "~/state", socketPath: "/run/p.sock", cliPath: "~/bin/prbox" }, {})).toEqual({
      home: join(homedir(), "state"),
      socketPath: "/run/p.sock",
      cliPath: join(homedir(), "bin", "prbox")
    })
    expect(resolveSettings({ home: "/h" }, {}).socketPath).toBe("/h/run/prboxd.sock")
  })
})
