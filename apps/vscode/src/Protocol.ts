/**
 * The daemon's protocol as this extension sees it: every type comes from
 * @prbox/protocol (the definitions prboxd itself serves), so a change of the
 * API breaks this build instead of drifting silently. The client is
 * @prbox/client's, shared with the CLI.
 */
export { type OpenRequest, type PortList, type PortView, type SandboxEvent, SandboxView } from "@prbox/protocol"

import type { SandboxView } from "@prbox/protocol"

export type SandboxId = SandboxView["id"]
export type SandboxStatus = SandboxView["status"]
