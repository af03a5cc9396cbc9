import { Effect } from "effect"
import { DevcontainerError } from "../Errors.ts"
import type { CheckedCompose, ComposeCheckInput } from "./ComposeTypes.ts"

/** The rendered project checked under prbox's policy, service by service, and cleaned. */
export const checkComposeProject = (
  _rendered: unknown,
  input: ComposeCheckInput
): Effect.Effect<CheckedCompose, DevcontainerError> =>
  Effect.fail(new DevcontainerError({ file: input.file, detail: "the Compose check is not written yet" }))
