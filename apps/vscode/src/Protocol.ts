/**
 * The daemon's protocol as this extension sees it: every type and the client
 * come from @prbox/protocol (the definitions prboxd itself serves), so a
 * change of the API breaks this build instead of drifting silently.
 */
export {
  Client,
  type ClientError,
  type OpenRequest,
  Paths,
  PrboxClient,
  type PrboxClientShape,
  type SandboxEvent,
  SandboxView
} from "@prbox/protocol"

import type { SandboxView } from "@prbox/protocol"

export type SandboxId = SandboxView["id"]
export type SandboxStatus = SandboxView["status"]
