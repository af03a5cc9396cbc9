import { Schema } from "effect"

/**
 * A devcontainer.json prbox will not use: unreadable, invalid, unsupported or
 * refused by policy. It names the file, the property path and what was
 * expected; never a value from the file (PR content may hold anything).
 */
export class DevcontainerError extends Schema.TaggedError<DevcontainerError>()("DevcontainerError", {
  file: Schema.String,
  property: Schema.optionalKey(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return this.property === undefined
      ? `${this.file}: ${this.detail}`
      : `${this.file}: ${this.property}: ${this.detail}`
  }
}
