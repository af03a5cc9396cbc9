import { Effect, Schema } from "effect"
import type { DevcontainerError } from "../Errors.ts"
import { decodeWith, parseJsonc } from "../Parse.ts"

// devcontainer-lock.json, as the devcontainers CLI writes it next to
// devcontainer.json: each feature key pinned to what it resolved to. A PR
// may pin; prbox never writes this file (its own pins are in its state).

const Pin = Schema.Struct({
  version: Schema.optionalKey(Schema.String),
  /** `registry/namespace/id@sha256:…` for an OCI feature, the URL for a tarball. */
  resolved: Schema.optionalKey(Schema.String),
  /** The manifest's digest (OCI) or the tarball's sha256, `sha256:…`. */
  integrity: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^sha256:[a-f0-9]{64}$/))),
  dependsOn: Schema.optionalKey(Schema.Array(Schema.String))
})

const LockFile = Schema.Struct({ features: Schema.optionalKey(Schema.Record(Schema.String, Pin)) })

/** A feature key's pinned digest, from the lock file. */
export type Pins = Readonly<Record<string, string>>

/** Where the lock file of a devcontainer.json is: `.devcontainer-lock.json` beside a `.devcontainer.json`. */
export const lockFilePath = (configFile: string): string =>
  configFile.endsWith("/.devcontainer.json") || configFile === ".devcontainer.json"
    ? configFile.replace(/\.devcontainer\.json$/, ".devcontainer-lock.json")
    : configFile.replace(/[^/]+$/, "devcontainer-lock.json")

/** The pins a lock file holds (a malformed one is an error naming it: it was meant to pin). */
export const parseLockFile = (file: string, text: string): Effect.Effect<Pins, DevcontainerError> =>
  Effect.map(
    Effect.flatMap(parseJsonc(file, text), (value) => decodeWith(LockFile)(file, value, false)),
    (lock) =>
      Object.fromEntries(
        Object.entries(lock.features ?? {}).flatMap(([key, pin]) =>
          pin.integrity === undefined ? [] : [[key, pin.integrity]]
        )
      )
  )
