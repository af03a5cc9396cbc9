import { PrboxApi } from "@prbox/protocol"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"

// TODO(i13-files): implement on SandboxFiles.
const notYet = () => Effect.die("files: not yet (i13-files)")

/** A running sandbox's files and diffs, on the engine's SandboxFiles. */
export const FilesLive = HttpApiBuilder.group(PrboxApi, "files", (handlers) =>
  Effect.succeed(
    handlers
      .handle("read", notYet)
      .handle("list", notYet)
      .handle("write", notYet)
      .handle("edit", notYet)
      .handle("diff", notYet)
  )
)
