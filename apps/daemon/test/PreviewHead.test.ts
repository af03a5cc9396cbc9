import { describe, expect, it } from "vitest"
import { safeNext } from "../src/PreviewAnswers.ts"
import { header, headerCount, parseHead, rewriteHead } from "../src/PreviewHead.ts"

const bytes = (text: string) => Buffer.from(text, "latin1")
const MAX = 1024

describe("parseHead", () => {
  it("waits for the whole head, then splits it from what follows", () => {
    expect(parseHead(bytes("GET / HTTP/1.1\r\nHost: a\r\n"), MAX)).toBeUndefined()
    const result = parseHead(bytes("POST /x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nbody"), MAX)
    expect(result?._tag).toBe("Head")
    if (result?._tag !== "Head") return
    expect(result.head).toMatchObject({ method: "POST", target: "/x?y=1", version: "HTTP/1.1" })
    expect(header(result.head, "content-length")).toBe("4")
    expect(result.rest.toString()).toBe("body")
    expect(result.head.raw.toString()).toBe("POST /x?y=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\n")
  })

  it.each([
    ["a bare LF request line", "GET / HTTP/1.1\nHost: a\r\n\r\n"],
    ["HTTP/2", "GET / HTTP/2.0\r\nHost: a\r\n\r\n"],
    ["a space before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n"],
    ["a folded line", "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n"],
    ["no method", " / HTTP/1.1\r\nHost: a\r\n\r\n"],
    ["a bare LF inside a header", "GET / HTTP/1.1\r\nHost: a\nX: b\r\n\r\n"]
  ])("refuses %s", (_, text) => {
    expect(parseHead(bytes(text), MAX)?._tag).toBe("Invalid")
  })

  it("refuses a head over the limit, complete or not", () => {
    expect(parseHead(bytes(`GET / HTTP/1.1\r\nX: ${"a".repeat(MAX)}`), MAX)?._tag).toBe("TooLarge")
    expect(parseHead(bytes(`GET / HTTP/1.1\r\nX: ${"a".repeat(MAX)}\r\n\r\n`), MAX)?._tag).toBe("TooLarge")
  })

  it("counts repeated headers and joins their values (cookies with ';')", () => {
    const result = parseHead(bytes("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\nCookie: x=1\r\ncookie: y=2\r\n\r\n"), MAX)
    if (result?._tag !== "Head") throw new Error("not parsed")
    expect(headerCount(result.head, "Host")).toBe(2)
    expect(header(result.head, "cookie")).toBe("x=1; y=2")
    expect(header(result.head, "origin")).toBeUndefined()
  })
})

describe("rewriteHead", () => {
  it("sets the target and replaces headers without case", () => {
    const result = parseHead(bytes("GET /s/x/3000/a HTTP/1.1\r\nHost: h\r\nconnection: keep-alive\r\n\r\n"), MAX)
    if (result?._tag !== "Head") throw new Error("not parsed")
    expect(rewriteHead(result.head, { target: "/a", set: { Connection: "close" } }).toString()).toBe(
      "GET /a HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
    )
  })
})

describe("safeNext", () => {
  it.each([
    ["/page?x=1", "/page?x=1"],
    ["//evil.example/", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example/", "/"],
    ["", "/"],
    [null, "/"]
  ])("%s → %s", (next, expected) => {
    expect(safeNext(next)).toBe(expected)
  })
})
