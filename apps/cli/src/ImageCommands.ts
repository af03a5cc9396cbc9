import { defaultImageRefusal } from "@prbox/domain"
import { Effect, Layer } from "effect"
import { Command } from "effect/cli"
import { CliFailure, ExitCode, printJson, runCommand } from "./Exit.ts"
import { json, out } from "./Params.ts"

/**
 * `prbox image build`: builds prbox's default sandbox image in this process,
 * not through the daemon: debootstrap needs root, and the daemon need not run as root.
 */

const loadEngine = Effect.tryPromise({
  // The engine and dockerode are loaded only here: every other command starts faster without them.
  try: () => Promise.all([import("@prbox/engine/node"), import("@prbox/docker")]),
  catch: () =>
    new CliFailure({
      tag: "Internal",
      message: "the engine of this installation could not be loaded",
      code: ExitCode.other
    })
})

const build = Command.make("build", { json }, (config) =>
  runCommand(
    config,
    Effect.gen(function* () {
      const refusal = defaultImageRefusal(process.getuid?.(), process.platform)
      if (refusal !== undefined) {
        return yield* new CliFailure({ tag: "DefaultImageUnavailable", message: refusal, code: ExitCode.usage })
      }
      const [{ DefaultImage, NodeContainerRuntime, NodePlatform }, { NodeDocker }] = yield* loadEngine
      const runtime = NodeContainerRuntime.layer.pipe(
        Layer.provide(NodeDocker.layer()),
        Layer.provideMerge(NodePlatform.layer)
      )
      const tag = yield* DefaultImage.buildDefaultImage((line) =>
        Effect.sync(() => process.stderr.write(`${line}\n`))
      ).pipe(
        Effect.provide(runtime),
        Effect.catchTag("EngineUnavailable", (error) =>
          Effect.fail(
            new CliFailure({ tag: "DockerUnavailable", message: error.message, code: ExitCode.dockerUnavailable })
          )
        )
      )
      if (config.json) printJson({ image: tag })
      else yield* out(tag)
    })
  )
).pipe(
  Command.withDescription(
    [
      "Build prbox's default sandbox image (Debian bookworm by debootstrap from this machine's Debian mirror,",
      "imported into Docker; PRBOX_DEBIAN_MIRROR overrides the mirror). Needs root: run it with sudo, or set",
      '"image" in $PRBOX_HOME/config.json instead. Progress goes to stderr, the image\'s tag to stdout',
      '(--json: {"image": tag}). The root filesystem is cached under ~/.cache/prbox: a rebuild is quick.'
    ].join("\n  ")
  )
)

export const imageCommand = Command.make("image").pipe(
  Command.withDescription("prbox's own images: `prbox image build` builds the default sandbox image."),
  Command.withSubcommands([build])
)
