/**
 * Text a sandbox wrote (progress lines, step output, file names, errors),
 * made safe to print: escape sequences would drive the reader's terminal
 * (move the cursor, rewrite what is shown, set the window title, write the
 * clipboard with OSC 52). Whole ESC/CSI/OSC/DCS/SOS/PM/APC sequences go,
 * 7-bit and 8-bit, terminated or not; then every other C0 control but `\n`
 * and `\t`, DEL and the C1 controls. `prbox exec` and `job -f` pass bytes
 * through instead, as `docker exec` does.
 */
const SEQUENCES = new RegExp(
  [
    // A string (OSC, DCS, SOS, PM, APC) up to its terminator (BEL for OSC, ST), or to the end when it has none.
    "(?:\\u001b[\\]PX^_]|[\\u009d\\u0090\\u0098\\u009e\\u009f])[\\s\\S]*?(?:\\u0007|\\u001b\\\\|\\u009c|$)",
    // CSI: parameters, intermediates, a final byte (or the end).
    "(?:\\u001b\\[|\\u009b)[0-?]*[ -/]*(?:[@-~]|$)",
    // Any other escape: intermediates and a final byte (or the end).
    "\\u001b[ -/]*(?:[0-~]|$)"
  ].join("|"),
  "gu"
)

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu

export const terminalSafe = (text: string): string => text.replace(SEQUENCES, "").replace(CONTROLS, "")
