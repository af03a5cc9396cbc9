import { Schema } from "effect"

/** The PR's devcontainer.json cannot be used: the file, the property and what was expected. */
export class InvalidDevcontainer extends Schema.TaggedError<InvalidDevcontainer>()("InvalidDevcontainer", {
  reason: Schema.String
}) {
  override get message(): string {
    return this.reason
  }
}
