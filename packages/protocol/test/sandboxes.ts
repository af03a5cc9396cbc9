import { PullRequestNumber, SandboxId } from "@prbox/domain"
import type { SandboxView } from "../src/index.ts"

/** A running sandbox of github.com/owner/repo#12 as the daemon lists it, for the clients' pure formatting tests. */
export const viewOf = (fields: Partial<SandboxView> = {}): SandboxView => ({
  id: SandboxId.make("aaaaaaaaaaa1"),
  provider: "github",
  host: "github.com",
  account: "42",
  repository: "owner/repo",
  pullRequest: PullRequestNumber.make(12),
  title: "Fix the parser",
  sourceBranch: "fix-parser",
  sourceCommit: "0123456789abcdef0123456789abcdef01234567",
  workspacePath: "/home/u/.prbox/workspaces/aaaaaaaaaaa1",
  containerId: "c0ffee",
  hostPort: 40001,
  url: "http://127.0.0.1:40001/",
  status: "running",
  detail: "ready",
  error: null,
  setupError: null,
  environment: null,
  createdAt: 1_000_000,
  lastActivityAt: 1_000_000,
  stoppedAt: null,
  legacyRetiredAt: null,
  destroyFenced: false,
  author: null,
  pullRequestState: null,
  baseRef: null,
  closedSeenAt: null,
  engine: null,
  hasPassword: true,
  workspaceFolder: null,
  ...fields
})
