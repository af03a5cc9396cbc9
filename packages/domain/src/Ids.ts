import { Schema } from "effect"

/** A sandbox id: 12 lowercase base-32 characters, so users can type a short unique prefix. */
export const SandboxId = Schema.String.check(Schema.isPattern(/^[a-z0-9]{12}$/)).pipe(Schema.brand("SandboxId"))
export type SandboxId = typeof SandboxId.Type

export const PullRequestNumber = Schema.Int.check(Schema.isGreaterThan(0)).pipe(Schema.brand("PullRequestNumber"))
export type PullRequestNumber = typeof PullRequestNumber.Type

/** Milliseconds since the epoch, always read from effect's Clock. */
export const Timestamp = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
export type Timestamp = typeof Timestamp.Type

export const HostPort = Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 65535 }))
export type HostPort = typeof HostPort.Type
