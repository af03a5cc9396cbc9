import { describe, expect, it } from "vitest"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { makeHome, prbox, tearDown } from "./support.ts"

/**
 * A sandbox whose setup writes escape sequences into its output, its last
 * progress line and a file's name: a window title (OSC 0), the clipboard
 * (OSC 52), a cleared screen (CSI), an 8-bit CSI. What the CLI prints of
 * them reaches the reader's terminal as text only; `prbox exec` passes the
 * bytes through, as `docker exec` does.
 */
const HOSTILE = [
  String.raw`printf '\033]0;pwned\007\033]52;c;cHduZWQ=\007\033[2Jcleared\302\233\061mred\n'`,
  String.raw`touch "$(printf 'evil\033[31mname')"`,
  String.raw`printf '\033]0;last line\007'`,
  "exit 3"
].join("; ")

/** Escape, BEL and the 8-bit CSI/OSC: none of them may reach the reader. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what the test looks for
const CONTROL = /[\u001b\u0007\u009b\u009d]/

describe("text a sandbox wrote, printed by the CLI", () => {
  it("open, logs, ls, status, files and the setup's failure show it without its controls; exec passes bytes through", async () => {
    const home = makeHome("cli-hostile-text", { setupCommands: [HOSTILE] })
    const remote = makeRemote(home)
    try {
      const open = await prbox(home, ["open", remote.path, "--pr", "1"])
      expect(open.code, open.stderr).toBe(0)
      const id = /sandbox ([a-z0-9]{12}) is running/.exec(open.stdout)?.[1] ?? ""
      expect(id, open.stdout).not.toBe("")
      const runs = [
        open,
        await prbox(home, ["logs", id]),
        await prbox(home, ["ls"]),
        await prbox(home, ["status", id]),
        await prbox(home, ["files", id])
      ]
      for (const run of runs) {
        expect(run.stdout).not.toMatch(CONTROL)
        expect(run.stderr).not.toMatch(CONTROL)
      }
      const logs = runs[1]?.stdout ?? ""
      expect(logs).toContain("cleared")
      expect(runs[4]?.stdout).toContain("evilname")

      const exec = await prbox(home, ["exec", id, "--", "printf", String.raw`\033[1mbold`])
      expect(exec.stdout).toBe("\u001b[1mbold")
    } finally {
      await tearDown(home)
    }
  })
})
