import { describe, expect, it } from "vitest"
import {
  byteSize,
  carriedVolumeName,
  codeServerVolumeName,
  copyProgressDue,
  copyProgressLine,
  filesAtOf,
  mountsRefusal,
  sandboxVolumeName
} from "../src/CarriedFiles.ts"

describe("filesAtOf", () => {
  it.each([
    ["an engine that sees this machine's files: bind mounts", "local", { _tag: "Known", at: "host" }],
    ["an engine elsewhere: carried into volumes", "remote", { _tag: "Known", at: "engine" }],
    [
      "a probe that could not answer: never guessed",
      "unknown",
      {
        _tag: "Unknown",
        reason: "cannot tell whether the Docker engine sees this machine's files: no image to probe with"
      }
    ]
  ] as const)("%s", (_name, location, expected) => {
    expect(filesAtOf(location, "no image to probe with")).toEqual(expected)
  })
})

describe("volume names", () => {
  it.each([
    ["workspace", "prbox-abc123-workspace"],
    ["home", "prbox-abc123-home"]
  ] as const)("a sandbox's %s", (kind, name) => {
    expect(carriedVolumeName("prbox-abc123", kind)).toBe(name)
  })

  it("the sandbox's own, by its source; an anonymous one by its place", () => {
    expect(sandboxVolumeName("prbox-abc123", "node_modules", 0)).toBe("prbox-abc123-volume-node_modules")
    expect(sandboxVolumeName("prbox-abc123", null, 2)).toBe("prbox-abc123-anonymous-2")
  })

  it("the code-server distribution's, by its key", () => {
    expect(codeServerVolumeName("4.139.1-node24.21.0-x64")).toBe("prbox-code-server-4.139.1-node24.21.0-x64")
  })
})

describe("byteSize", () => {
  it.each([
    [0, "0 B"],
    [999, "999 B"],
    [1000, "1.0 kB"],
    [12_345_678, "12.3 MB"],
    [40_100_000, "40.1 MB"],
    [3_200_000_000, "3.2 GB"],
    [5e15, "5000.0 TB"]
  ] as const)("%d bytes: %s", (bytes, text) => {
    expect(byteSize(bytes)).toBe(text)
  })
})

describe("copyProgressLine", () => {
  it.each([
    [
      "the total first",
      "the workspace",
      0,
      40_100_000,
      1234,
      "copying the workspace to the engine: 0 B of 40.1 MB (1,234 files)"
    ],
    [
      "part way",
      "the workspace",
      12_300_000,
      40_100_000,
      1234,
      "copying the workspace to the engine: 12.3 MB of 40.1 MB (1,234 files)"
    ],
    ["one file", "the home", 10, 10, 1, "copying the home to the engine: 10 B of 10 B (1 file)"]
  ] as const)("%s", (_name, what, sent, total, files, line) => {
    expect(copyProgressLine(what, sent, total, files)).toBe(line)
  })
})

describe("copyProgressDue", () => {
  it.each([
    ["the last bytes", 0, 100, 100, true],
    ["an empty folder", 0, 0, 0, true],
    ["a step's worth since the last line", 0, 8_000_000, 50_000_000, true],
    ["less than a step", 1_000_000, 8_500_000, 50_000_000, false]
  ] as const)("%s", (_name, last, sent, total, due) => {
    expect(copyProgressDue(last, sent, total)).toBe(due)
  })
})

describe("mountsRefusal", () => {
  it("names the mounts and says why", () => {
    expect(mountsRefusal(["/home/me/.npmrc", "/home/me/data"])).toBe(
      "the Docker engine runs on another machine and cannot mount this machine's folders (/home/me/.npmrc, /home/me/data): remove these mounts from config.json (or the trusted widening) or use a local engine"
    )
  })
})
