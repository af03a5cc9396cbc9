import { SandboxFiles } from "@prbox/engine"
import { DEFAULT_LIST_DEPTH, DEFAULT_READ_BYTES, PrboxApi } from "@prbox/protocol"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { api } from "./Mapping.ts"

/** A running sandbox's files and diffs, on the engine's SandboxFiles (which checks state and paths). */
export const FilesHandlers = HttpApiBuilder.group(PrboxApi, "files", (handlers) =>
  Effect.gen(function* () {
    const files = yield* SandboxFiles
    return handlers
      .handle("read", ({ params, query }) =>
        api(
          files.read(params.id, {
            path: query.path,
            ...(query.startLine === undefined ? {} : { startLine: query.startLine }),
            ...(query.endLine === undefined ? {} : { endLine: query.endLine }),
            maxBytes: query.maxBytes ?? DEFAULT_READ_BYTES
          })
        )
      )
      .handle("list", ({ params, query }) =>
        api(files.list(params.id, { path: query.path ?? ".", depth: query.depth ?? DEFAULT_LIST_DEPTH }))
      )
      .handle("write", ({ params, payload }) => api(files.write(params.id, payload)))
      .handle("edit", ({ params, payload }) => api(files.edit(params.id, payload)))
      .handle("diff", ({ params, payload }) =>
        api(
          files.diff(params.id, {
            against: payload.against,
            paths: payload.paths ?? [],
            stat: payload.stat ?? false,
            maxBytes: payload.maxBytes ?? DEFAULT_READ_BYTES
          })
        )
      )
      .handle("pullRequestFile", ({ params, query }) => api(files.pullRequestFile(params.id, query)))
  })
)
