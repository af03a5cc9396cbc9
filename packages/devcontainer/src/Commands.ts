import type { LifecycleCommand, SingleCommand } from "@prbox/domain"
import { Schema } from "effect"

/** A single command as devcontainer.json writes it: a shell string or an argv array (never empty). */
export const RawSingleCommand = Schema.Union([
  Schema.String,
  Schema.Array(Schema.String).check(Schema.isMinLength(1, { expected: "a non-empty array of strings" }))
]).annotate({ expected: "a string or a non-empty array of strings" })
export type RawSingleCommand = typeof RawSingleCommand.Type

/** A lifecycle command in any of the spec's three forms: string, array, or an object of named commands. */
export const RawLifecycleCommand = Schema.Union([
  RawSingleCommand,
  Schema.Record(Schema.String, RawSingleCommand)
]).annotate({ expected: "a string, a non-empty array of strings or an object of named commands" })
export type RawLifecycleCommand = typeof RawLifecycleCommand.Type

const toSingle = (raw: RawSingleCommand): SingleCommand =>
  typeof raw === "string" ? { _tag: "Shell", command: raw } : { _tag: "Exec", argv: raw }

/** The spec's forms as prbox runs them: string → `/bin/sh -c`, array → executed directly, object → in parallel. */
export const toLifecycleCommand = (raw: RawLifecycleCommand): LifecycleCommand =>
  typeof raw === "string" || Array.isArray(raw)
    ? toSingle(raw as RawSingleCommand)
    : {
        _tag: "Parallel",
        entries: Object.entries(raw).map(([name, command]) => ({ name, command: toSingle(command) }))
      }
