/**
 * A Compose sandbox's containers made (never started): the checked project
 * with prbox's part added (ComposeOverlay.ts) written into the sandbox's
 * Compose folder (0600: it holds the access password, as the container's
 * environment does), then `up --no-start` makes every service's container,
 * network and volume. The sandbox's container is the app service's, found
 * by its labels. Starting is the runtime's (by label), after the host's
 * last look at the workspace.
 */
import { posixPath } from "@prbox/domain"
import { Effect } from "effect"
import { type ContainerSpec, LABELS } from "../ContainerSpec.ts"
import { SetupFailed } from "../Errors.ts"
import { composeFolder } from "../environment/ComposeFiles.ts"
import { COMPOSE_SERVICE_LABEL, composeProjectName, overlayCompose } from "../environment/ComposeOverlay.ts"
import type { ComposeDeps } from "../environment/PrepareCompose.ts"

export const provisionCompose = Effect.fn("SandboxService.provisionCompose")(function* (
  deps: ComposeDeps,
  input: {
    readonly sandboxId: string
    readonly spec: ContainerSpec
    readonly compose: { readonly service: string; readonly services: ReadonlyArray<string> }
    readonly onProgress: (line: string) => Effect.Effect<void>
  }
) {
  const { fs, runtime, compose, home } = deps
  const folder = composeFolder(home, input.sandboxId)
  const failed = (what: string) => (error: { readonly message: string }) =>
    new SetupFailed({ reason: `the Compose project ${what} (${error.message}); \`prbox rebuild\` makes it again` })
  const checked = yield* fs
    .readFileString(posixPath.join(folder.root, "checked.json"))
    .pipe(Effect.mapError(failed("cannot be read")))
  const project = yield* Effect.try({
    try: () => JSON.parse(checked) as Record<string, unknown>,
    catch: () => new SetupFailed({ reason: "the Compose project cannot be read; `prbox rebuild` makes it again" })
  })
  const { service, services } = input.compose
  const overlaid = overlayCompose({ project, service, spec: input.spec })
  if (overlaid === undefined) return yield* new SetupFailed({ reason: `the Compose project has no service ${service}` })
  yield* fs
    .writeFileString(folder.project, JSON.stringify(overlaid, null, 1), { mode: 0o600 })
    .pipe(Effect.mapError(failed("cannot be written")))
  const name = composeProjectName(input.sandboxId)
  yield* compose
    .create({ name, directory: folder.root }, folder.project, services, input.onProgress)
    .pipe(Effect.mapError((error) => new SetupFailed({ reason: error.message })))
  const found = (yield* runtime.listByLabel({ [LABELS.sandbox]: input.sandboxId })).filter(
    (container) => container.labels[COMPOSE_SERVICE_LABEL] === service && container.labels[LABELS.service] === undefined
  )
  const [app, ...more] = found
  if (app === undefined || more.length > 0) {
    return yield* new SetupFailed({
      reason: `Compose made ${found.length} containers of service ${service} (project ${name}); expected one`
    })
  }
  return app.containerId
})
