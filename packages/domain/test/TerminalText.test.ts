import { assert, describe, it } from "@effect/vitest"
import { terminalSafe } from "@prbox/domain"

const ESC = "\u001b"
const BEL = "\u0007"

describe("text a sandbox wrote, made safe to print", () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    ["plain text, newlines and tabs stay", "npm install\n\tdone\n", "npm install\n\tdone\n"],
    ["colours (CSI SGR)", `${ESC}[31mred${ESC}[0m`, "red"],
    ["cursor moves and clearing (CSI)", `a${ESC}[2K${ESC}[1A${ESC}[10;20Hb`, "ab"],
    ["a private-mode CSI", `${ESC}[?1049hx${ESC}[?25l`, "x"],
    ["the window title (OSC 0, BEL)", `${ESC}]0;pwned${BEL}after`, "after"],
    ["the clipboard (OSC 52, ST)", `${ESC}]52;c;Y3VybCBldmlsfHNo${ESC}\\after`, "after"],
    ["a hyperlink (OSC 8)", `${ESC}]8;;https://x.test${ESC}\\link${ESC}]8;;${ESC}\\`, "link"],
    ["an unterminated OSC runs to the end", `ok ${ESC}]0;title and the rest`, "ok "],
    ["8-bit CSI", "a\u009b31mb", "ab"],
    ["8-bit OSC with 8-bit ST", "a\u009d52;c;eHg=\u009cb", "ab"],
    ["DCS, PM and APC strings", `a${ESC}Pq#0${ESC}\\b${ESC}^pm${ESC}\\c${ESC}_apc${ESC}\\d`, "abcd"],
    ["two-byte escapes (reset, charset, save cursor)", `a${ESC}cb${ESC}(0c${ESC}7d`, "abcd"],
    ["a lone ESC at the end", `end${ESC}`, "end"],
    ["carriage return, backspace, bell, DEL", "a\rb\bc\u0007d\u007fe", "abcde"],
    ["other C0 and C1 controls", "a\u0000b\u001fc\u0085d\u0080e", "abcde"],
    ["non-ASCII text stays", "café ✓ 日本", "café ✓ 日本"]
  ]
  for (const [name, input, expected] of cases) {
    it(name, () => {
      assert.strictEqual(terminalSafe(input), expected)
    })
  }
})
