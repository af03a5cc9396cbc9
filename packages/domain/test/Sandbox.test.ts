import { assert, describe, it } from "@effect/vitest"
import {
  isLive,
  PullRequestNumber,
  type RetirementState,
  restartRefusal,
  retirementState,
  Sandbox,
  SandboxId,
  type SandboxStatus
} from "@prbox/domain"
import { Redacted, Schema } from "effect"

const base: Sandbox = {
  id: SandboxId.make("abcdef012345"),
  provider: "github",
  host: "github.com",
  account: "583231",
  repository: "octo/hello",
  pullRequest: PullRequestNumber.make(7),
  title: null,
  sourceBranch: "feature",
  sourceCommit: "0123456789abcdef0123456789abcdef01234567",
  accessPassword: Redacted.make("s3cret-password"),
  workspacePath: "/home/u/.prbox/workspaces/abcdef012345",
  containerId: "c0ffee",
  hostPort: 40123,
  status: "stopped",
  detail: null,
  error: null,
  setupError: null,
  environment: null,
  environmentPlan: null,
  createdAt: 1,
  lastActivityAt: 2,
  stoppedAt: 3,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  remoteUrl: null
}
const row = (patch: Partial<Sandbox>): Sandbox => ({ ...base, ...patch })

describe("retirementState", () => {
  const table: ReadonlyArray<readonly [string, Sandbox, RetirementState]> = [
    ["current row", base, "current"],
    ["v1 row without password", row({ accessPassword: null, host: null }), "unauthenticated"],
    ["password-less row with a host", row({ accessPassword: null }), "unauthenticated"],
    ["authenticated hostless row", row({ host: null }), "pending"],
    ["marked retiring, never finished", row({ host: null, status: "stopping", legacyRetiredAt: 10 }), "interrupted"],
    ["retired", row({ host: null, status: "stopped", legacyRetiredAt: 10 }), "retired"]
  ]
  for (const [name, sandbox, state] of table) {
    it(`${name} -> ${state}`, () => assert.strictEqual(retirementState(sandbox), state))
  }
})

describe("restartRefusal", () => {
  const table: ReadonlyArray<readonly [string, Sandbox, RegExp | undefined]> = [
    ["stopped current row", base, undefined],
    ["errored row with a container", row({ status: "error" }), undefined],
    ["retired legacy row", row({ legacyRetiredAt: 5, host: null }), /retired/],
    ["row without a password", row({ accessPassword: null }), /no access password/],
    ["fenced row", row({ destroyFenced: true }), /prbox rm/],
    ["row whose container is gone", row({ containerId: null }), undefined],
    ["row without a workspace", row({ containerId: null, workspacePath: null }), /no workspace/],
    ["running row", row({ status: "running" }), /is running/]
  ]
  for (const [name, sandbox, expected] of table) {
    it(`${name}: ${expected === undefined ? "restartable" : `refused (${expected.source})`}`, () => {
      const refusal = restartRefusal(sandbox)
      if (expected === undefined) assert.isUndefined(refusal)
      else assert.match(refusal ?? "", expected)
    })
  }
})

describe("isLive", () => {
  const table: ReadonlyArray<readonly [SandboxStatus, boolean]> = [
    ["creating", true],
    ["cloning", true],
    ["starting", true],
    ["running", true],
    ["stopping", true],
    ["stopped", false],
    ["error", false]
  ]
  for (const [status, live] of table) {
    it(`${status}: live=${live}`, () => assert.strictEqual(isLive({ status }), live))
  }
})

describe("Sandbox schema", () => {
  it("keeps the password redacted in its string form", () => {
    const decoded = Schema.decodeUnknownSync(Sandbox)({ ...base, accessPassword: "s3cret-password" })
    assert.notInclude(String(decoded.accessPassword), "s3cret")
    assert.notInclude(JSON.stringify(decoded), "s3cret")
    assert.strictEqual(
      decoded.accessPassword === null ? null : Redacted.value(decoded.accessPassword),
      "s3cret-password"
    )
  })

  it("refuses malformed ids and pull request numbers", () => {
    assert.throws(() => Schema.decodeUnknownSync(Sandbox)({ ...base, id: "ABC", accessPassword: "x" }))
    assert.throws(() => Schema.decodeUnknownSync(Sandbox)({ ...base, pullRequest: 0, accessPassword: "x" }))
  })
})
