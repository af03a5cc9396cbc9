import type { Sandbox } from "@prbox/domain"
import { Sandbox as SandboxSchema } from "@prbox/domain"
import { Redacted, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  ApiErrors,
  Busy,
  errorBody,
  isApiError,
  isProbePath,
  isStreamPath,
  LogPage,
  NotFound,
  PortList,
  PreviewToken,
  PublicRequest,
  PushRefused,
  Sandboxes,
  SandboxList,
  SandboxView,
  toView,
  UpdateRefused
} from "../src/index.ts"

const secret = "s3cr3t-Password-that-must-not-leak"

const row: Sandbox = Schema.decodeUnknownSync(SandboxSchema)({
  id: "abcdefghijkl",
  provider: "github",
  host: "github.com",
  account: "",
  repository: "o/r",
  pullRequest: 7,
  title: null,
  sourceBranch: "pr-7",
  sourceCommit: "0123456789abcdef0123456789abcdef01234567",
  accessPassword: secret,
  workspacePath: "/tmp/w",
  containerId: "c0ffee",
  hostPort: 41234,
  status: "running",
  detail: null,
  error: null,
  setupError: null,
  environment: null,
  environmentPlan: null,
  createdAt: 1,
  lastActivityAt: 2,
  stoppedAt: null,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  remoteUrl: null
})

describe("wire sandbox", () => {
  it("never carries the access password", () => {
    expect(Redacted.value(row.accessPassword ?? Redacted.make(""))).toBe(secret)
    const view = toView(row)
    const json = JSON.stringify(Schema.encodeSync(SandboxView)(view))
    expect(json).not.toContain(secret)
    expect(Object.keys(view)).not.toContain("accessPassword")
    expect(view.hasPassword).toBe(true)
    expect(view.url).toBe("http://127.0.0.1:41234/")
  })

  it("round-trips through JSON and rejects a malformed one", () => {
    const json = JSON.parse(JSON.stringify([toView(row)]))
    expect(Schema.decodeUnknownSync(SandboxList)(json)).toEqual([toView(row)])
    expect(() => Schema.decodeUnknownSync(SandboxView)({ ...json[0], status: "exploded" })).toThrow()
  })
})

describe("wire log page", () => {
  it("holds the stream's variants; an untagged line is refused", () => {
    const lines = [
      { _tag: "StatusChanged", seq: 1, sandboxId: "abcdefghijkl", at: 10, status: "error", error: "clone failed" },
      { _tag: "Progress", seq: 2, sandboxId: "abcdefghijkl", at: 11, status: "error", line: "status: running" }
    ]
    const page = Schema.decodeUnknownSync(LogPage)({ lines, next: 2, more: false })
    expect(page.lines.map((event) => event._tag)).toEqual(["StatusChanged", "Progress"])
    const untagged = { seq: 1, sandboxId: "abcdefghijkl", at: 10, status: "cloning", line: "status: cloning" }
    expect(() => Schema.decodeUnknownSync(LogPage)({ lines: [untagged], next: 1, more: false })).toThrow()
  })
})

describe("wire ports", () => {
  const port = {
    port: 3000,
    label: "web",
    source: "devcontainer",
    onAutoForward: "openBrowser",
    listening: true,
    public: false,
    url: "http://3000.abcdefghijkl.localhost:47000/",
    pathUrl: "http://localhost:47000/s/abcdefghijkl/3000/"
  }
  const discovered = { ...port, port: 5173, label: null, source: "discovered", onAutoForward: null, public: true }

  it("a port list round-trips through JSON with both URLs of each port", () => {
    const list = { previewPort: 47000, ports: [port, discovered] }
    const decoded = Schema.decodeUnknownSync(PortList)(JSON.parse(JSON.stringify(list)))
    expect(decoded).toEqual(list)
    expect(JSON.parse(JSON.stringify(Schema.encodeSync(PortList)(decoded)))).toEqual(list)
  })

  it("refuses a port out of range, an unknown source, a missing URL", () => {
    const bad = (fields: Record<string, unknown>) => () =>
      Schema.decodeUnknownSync(PortList)({ previewPort: 47000, ports: [{ ...port, ...fields }] })
    expect(bad({})).not.toThrow()
    expect(bad({ port: 0 })).toThrow()
    expect(bad({ port: 65536 })).toThrow()
    expect(bad({ port: 3000.5 })).toThrow()
    expect(bad({ source: "guessed" })).toThrow()
    expect(bad({ url: undefined })).toThrow()
    expect(bad({ pathUrl: undefined })).toThrow()
    expect(() => Schema.decodeUnknownSync(PortList)({ previewPort: 0, ports: [] })).toThrow()
  })

  it("the public switch and the token are their own small objects", () => {
    expect(Schema.decodeUnknownSync(PublicRequest)({ public: true })).toEqual({ public: true })
    expect(() => Schema.decodeUnknownSync(PublicRequest)({ public: "yes" })).toThrow()
    expect(Schema.decodeUnknownSync(PreviewToken)({ token: "ab12" })).toEqual({ token: "ab12" })
    expect(() => Schema.decodeUnknownSync(PreviewToken)({})).toThrow()
  })

  it("the :port of POST /v1/sandboxes/:id/ports/:port/public is a whole number 1..65535", () => {
    const endpoint = Sandboxes.endpoints.setPublic
    expect(endpoint.path).toBe("/v1/sandboxes/:id/ports/:port/public")
    const params = Schema.decodeUnknownSync(
      Schema.toCodecStringTree(endpoint.params as Schema.Top) as unknown as Schema.Codec<unknown, unknown>
    )
    expect(params({ id: "abcdefghijkl", port: "3000" })).toEqual({ id: "abcdefghijkl", port: 3000 })
    for (const bad of ["0", "65536", "abc", "80.5", ""]) {
      expect(() => params({ id: "abcdefghijkl", port: bad }), bad).toThrow()
    }
    expect(Sandboxes.endpoints.ports.path).toBe("/v1/sandboxes/:id/ports")
    expect(Sandboxes.endpoints.previewToken.path).toBe("/v1/sandboxes/:id/preview-token")
  })
})

describe("errors", () => {
  it("every error is a stable tag and a message on the wire", () => {
    // PushRefused also carries its kind (checked below); every other error is a tag and a message.
    for (const errorClass of ApiErrors.filter((e) => e !== PushRefused)) {
      const schema = errorClass as unknown as Schema.Codec<unknown, unknown>
      const error = new (
        errorClass as new (props: {
          message: string
        }) => { readonly _tag: string; readonly message: string }
      )({
        message: "m"
      })
      const encoded = Schema.encodeUnknownSync(schema)(error) as { _tag: string; message: string }
      expect(encoded).toEqual({ _tag: error._tag, message: "m" })
      expect(JSON.parse(errorBody(error._tag as "Busy", "m"))).toEqual(encoded)
      const decoded = Schema.decodeUnknownSync(schema)(encoded)
      expect(isApiError(decoded)).toBe(true)
    }
    expect(
      new Set(
        ApiErrors.map(
          (e) =>
            new (e as new (p: { message: string; kind: string }) => { _tag: string })({ message: "", kind: "bundle" })
              ._tag
        )
      ).size
    ).toBe(ApiErrors.length)
    expect(new NotFound({ message: "no sandbox x" }).message).toBe("no sandbox x")
    const push = new PushRefused({ message: "dirty", kind: "uncommitted-changes", changedFiles: ["a.txt"] })
    expect(Schema.encodeUnknownSync(PushRefused as unknown as Schema.Codec<unknown, unknown>)(push)).toEqual({
      _tag: "PushRefused",
      message: "dirty",
      kind: "uncommitted-changes",
      changedFiles: ["a.txt"]
    })
    // An update refused over a dirty workspace carries its files for `--json`.
    const refused = new UpdateRefused({ message: "dirty", changedFiles: ["a.txt", "b c"] })
    const wire = Schema.encodeUnknownSync(UpdateRefused as unknown as Schema.Codec<unknown, unknown>)(refused)
    expect(wire).toEqual({ _tag: "UpdateRefused", message: "dirty", changedFiles: ["a.txt", "b c"] })
    expect(isApiError(new Error("x"))).toBe(false)
    expect(isApiError(new Busy({ message: "b" }))).toBe(true)
  })
})

describe("paths", () => {
  it("tells streams and probes from ordinary requests", () => {
    expect(isStreamPath("/v1/events")).toBe(true)
    expect(isStreamPath("/v1/sandboxes/abcdefghijkl/events")).toBe(true)
    expect(isStreamPath("/v1/sandboxes/abcdefghijkl/logs")).toBe(false)
    expect(isProbePath("/version")).toBe(true)
    expect(isProbePath("/v1/health")).toBe(true)
    expect(isProbePath("/v1/sandboxes")).toBe(false)
  })
})
