import { planEnvironment, reachableServices } from "@prbox/devcontainer"
import type { EnvironmentPlan, IgnoredSetting, ImageInfo, LifecycleStep, SandboxEnvironment } from "@prbox/domain"
import { imageRegistry } from "@prbox/domain"
import { Context, Effect, FileSystem, Layer } from "effect"
import { CODE_SERVER_MOUNT, CONTAINER_HOME, CONTAINER_WORKSPACE, SSH_SOCKETS_MOUNT } from "../CodeServerSpec.ts"
import { ComposeCli } from "../ComposeCli.ts"
import { Config, checkMounts, type PrboxConfig } from "../Config.ts"
import { ContainerRuntime } from "../ContainerRuntime.ts"
import { daemonSandboxUser } from "../ContainerSpec.ts"
import { RuntimeError, SetupFailed } from "../Errors.ts"
import { type InstalledFeature, InstallFeatures } from "../features/InstallFeatures.ts"
import { accessHint, localRegistryRefusal, RegistryAuth, refusedForCredentials } from "../RegistryAuth.ts"
import { SandboxTools } from "../SandboxTools.ts"
import { type BuildFiles, buildFromWorkspace, type EnvironmentOwner } from "./BuildContext.ts"
import type { EnvironmentChoice } from "./ChooseEnvironment.ts"
import { devcontainerIdOf } from "./DevcontainerId.ts"
import { composeWorkspaceFolder, type PreparedCompose, prepareCompose, serviceCommand } from "./PrepareCompose.ts"
import { mapRemoteUserUid } from "./RemoteUserUid.ts"
import { decideWidening } from "./TrustedWidening.ts"

/** An image whose entrypoint is code-server on port 8080 says so with this label; prbox then mounts nothing. */
export const CODE_SERVER_LABEL = "dev.prbox.code-server"

/** The user's own setup commands: create-time steps, after the PR's. */
const configSteps = (config: PrboxConfig): ReadonlyArray<LifecycleStep> =>
  config.setupCommands.map((command) => ({
    hook: "postCreateCommand",
    command: { _tag: "Shell", command },
    origin: "config.json"
  }))

/** A configured or default image's plan: prbox's workspace folder, the user's steps and limits. */
export const imagePlan = (config: PrboxConfig, image: string): EnvironmentPlan => ({
  image,
  containerEnv: {},
  remoteEnv: {},
  remoteUser: null,
  workspaceFolder: CONTAINER_WORKSPACE,
  forwardPorts: [],
  portsAttributes: {},
  cpus: config.cpus ?? null,
  memoryMb: config.memoryMb ?? null,
  extensions: [],
  steps: configSteps(config)
})

/**
 * From the choice made at admission to an image that is present and the
 * plan the container is made from: a devcontainer.json's image is pulled or
 * its Dockerfile built (from the workspace), a configured image pulled, the
 * default image built when it is missing. The environment says which.
 */
const make = Effect.gen(function* () {
  const runtime = yield* ContainerRuntime
  const registries = yield* RegistryAuth
  const tools = yield* SandboxTools
  const fs = yield* FileSystem.FileSystem
  const { userHome, home } = yield* Config
  const installFeatures = yield* InstallFeatures
  const composeDeps = { fs, runtime, compose: yield* ComposeCli, home }

  /** A trusted repository's widening, its binds checked to be under the user's home like config.json's. */
  const widened = (
    path: string,
    planned: ReturnType<typeof planEnvironment>,
    onProgress: (line: string) => Effect.Effect<void>
  ) =>
    Effect.gen(function* () {
      if (planned.trusted === null) return planned.plan
      const decided = decideWidening(planned.trusted)
      for (const what of decided.ignored) yield* onProgress(`warning: ${path}: ${what} is not supported; ignored`)
      const mounts = yield* checkMounts(fs, path, userHome, decided.mounts).pipe(
        Effect.mapError((error) => new SetupFailed({ reason: error.message }))
      )
      const widening = {
        runAsRoot: planned.runAsRoot,
        privileged: decided.privileged,
        capAdd: decided.capAdd,
        securityOpt: decided.securityOpt,
        mounts
      }
      return { ...planned.plan, widening }
    })

  /**
   * Pulls with the user's login only where config.json's registryCredentials
   * allows it; a refusal that reads as wanting credentials says what to do.
   */
  const pulled = (image: string, onProgress: (line: string) => Effect.Effect<void>) =>
    Effect.gen(function* () {
      const access = yield* registries
        .forImage(image)
        .pipe(Effect.mapError((error) => new SetupFailed({ reason: error.message })))
      yield* runtime
        .ensureImage(image, onProgress, access.login)
        .pipe(
          Effect.catchTag("RuntimeError", (error) =>
            Effect.fail(
              error.operation === "image.pull" && refusedForCredentials(error.detail)
                ? new RuntimeError({ operation: error.operation, detail: `${error.detail}; ${accessHint(access)}` })
                : error
            )
          )
        )
    })

  const inspected = (image: string) =>
    Effect.flatMap(runtime.imageInfo(image), (info) =>
      info === undefined
        ? Effect.fail(new RuntimeError({ operation: "image.inspect", detail: `${image} is not present` }))
        : Effect.succeed(info)
    )

  /**
   * `updateRemoteUserUID`: the plan's image with `user`'s uid mapped to the
   * workspace owner's. A build that fails leaves the image as it was, with
   * a warning: the sandbox then runs as today, as the workspace owner's uid.
   */
  const withRemoteUserUid = (
    plan: EnvironmentPlan,
    info: ImageInfo,
    user: string,
    onProgress: (line: string) => Effect.Effect<void>
  ) =>
    Effect.scoped(
      mapRemoteUserUid(runtime, { image: plan.image, info, remoteUser: user, owner: daemonSandboxUser() }, onProgress)
    ).pipe(
      Effect.map(({ tag }): EnvironmentPlan => ({ ...plan, image: tag, remoteUserMapped: true })),
      Effect.catchTag("ImageBuildFailed", (error) =>
        Effect.as(
          onProgress(
            `warning: updateRemoteUserUID: ${user}'s uid could not be updated (${error.message}); it keeps the image's`
          ),
          plan
        )
      ),
      Effect.provideService(FileSystem.FileSystem, fs)
    )

  const withLabel = (plan: EnvironmentPlan, info: ImageInfo): EnvironmentPlan =>
    info.labels[CODE_SERVER_LABEL] === "included" ? { ...plan, codeServer: "included" } : plan

  const recorded = (
    kind: SandboxEnvironment["kind"],
    image: string,
    info: ImageInfo,
    devcontainer?: {
      readonly path: string
      readonly ignored: ReadonlyArray<IgnoredSetting>
      readonly features: ReadonlyArray<InstalledFeature>
    }
  ): SandboxEnvironment => ({
    kind,
    ...(devcontainer === undefined ? {} : { path: devcontainer.path }),
    image,
    imageDigest: info.digest ?? info.id,
    ...(devcontainer === undefined ? {} : { ignored: devcontainer.ignored }),
    ...(devcontainer === undefined || devcontainer.features.length === 0 ? {} : { features: devcontainer.features })
  })

  return Effect.fn("SandboxService.prepareEnvironment")(function* (
    row: EnvironmentOwner,
    choice: EnvironmentChoice,
    workspacePath: string,
    config: PrboxConfig,
    readFrom: BuildFiles,
    onProgress: (line: string) => Effect.Effect<void>
  ) {
    switch (choice._tag) {
      case "Configured": {
        yield* pulled(choice.image, onProgress)
        const info = yield* inspected(choice.image)
        return {
          plan: withLabel(imagePlan(config, choice.image), info),
          environment: recorded("config", choice.image, info)
        }
      }
      case "Default": {
        yield* tools.ensureDefaultImage(onProgress)
        const info = yield* inspected(tools.defaultImage)
        const plan = withLabel(imagePlan(config, tools.defaultImage), info)
        return { plan, environment: recorded("default", tools.defaultImage, info) }
      }
      case "Devcontainer": {
        const { spec } = choice
        const pulledImage = (image: string) =>
          Effect.gen(function* () {
            const registry = imageRegistry(image)
            const refused = registry === undefined ? undefined : localRegistryRefusal(registry, config.localRegistries)
            if (refused !== undefined)
              return yield* new SetupFailed({ reason: `${spec.path}: image ${image}: ${refused}` })
            yield* pulled(image, onProgress)
          })
        let image: string
        let compose: PreparedCompose | undefined
        if (spec.source._tag === "Image") {
          image = spec.source.image
          yield* pulledImage(image)
        } else if (spec.source._tag === "Compose") {
          if (choice.files === undefined) return yield* new SetupFailed({ reason: `${spec.path}: no files to read` })
          const input = { row, spec, source: spec.source, files: choice.files, config, workspacePath, readFrom }
          compose = yield* prepareCompose(composeDeps, { ...input, onProgress })
          // Every image by prbox's pull (RegistryAuth's rules): Compose, with --no-build, finds them present.
          for (const pull of new Set(compose.pulls)) yield* pulledImage(pull)
          image = compose.image
        } else {
          image = yield* buildFromWorkspace(fs, runtime, {
            row,
            path: spec.path,
            what: spec.path,
            build: spec.source,
            workspacePath,
            readFrom,
            localRegistries: config.localRegistries,
            onProgress
          })
        }
        let features: ReadonlyArray<InstalledFeature> = []
        if (spec.features.length > 0) {
          const installed = yield* installFeatures(
            spec,
            choice.features,
            { image, info: yield* inspected(image) },
            `${row.host ?? "local"}/${row.repository} ${spec.path}`,
            onProgress
          ).pipe(
            Effect.catchTag("FeatureUnavailable", (error) => Effect.fail(new SetupFailed({ reason: error.message })))
          )
          image = installed.image
          features = installed.features
        }
        const info = yield* inspected(image)
        const resources = yield* tools.resources
        const limits = {
          ...(config.cpus === undefined ? {} : { cpus: config.cpus }),
          ...(config.memoryMb === undefined ? {} : { memoryMb: config.memoryMb })
        }
        const { entrypoint, cmd } = info
        const source = spec.source
        const app = compose?.project.services as Record<string, Record<string, unknown>> | undefined
        const folder = (path: string) =>
          composeWorkspaceFolder(
            path,
            app?.[source._tag === "Compose" ? source.service : ""],
            compose?.repository ?? "",
            spec.repositoryName
          )
        const planned = planEnvironment(
          compose === undefined ? spec : { ...spec, workspaceFolder: folder(spec.workspaceFolder) },
          image,
          { metadataLabel: info.labels["devcontainer.metadata"], user: info.user, env: info.env, entrypoint, cmd },
          limits,
          resources.cpus,
          resources.memoryMb,
          // prbox's own folders (the workspace folder is the spec's): no volume of the PR's goes over them.
          [CONTAINER_HOME, CODE_SERVER_MOUNT, SSH_SOCKETS_MOUNT],
          yield* devcontainerIdOf(row.id)
        )
        for (const warning of [...spec.warnings, ...planned.warnings]) yield* onProgress(`warning: ${warning}`)
        const trusted = yield* widened(spec.path, planned, onProgress)
        const mapped =
          planned.mapUser === null ? trusted : yield* withRemoteUserUid(trusted, info, planned.mapUser, onProgress)
        const plan = withLabel({ ...mapped, steps: [...mapped.steps, ...configSteps(config)] }, info)
        const environment = recorded("devcontainer", image, info, {
          path: spec.path,
          ignored: [...planned.ignored, ...(compose?.ignored ?? [])],
          features
        })
        if (compose !== undefined && source._tag === "Compose") {
          const own = app?.[source.service]
          const command = own === undefined ? undefined : serviceCommand(own, info)
          const composed: EnvironmentPlan = {
            ...plan,
            ...(plan.imageCommand === undefined || command === undefined ? {} : { imageCommand: command }),
            compose: {
              service: source.service,
              services: compose.checked.services,
              reachable: reachableServices(compose.checked.project, source.service, compose.checked.services)
            }
          }
          return { plan: composed, environment }
        }
        return { plan, environment }
      }
    }
  })
})

export class PrepareEnvironment extends Context.Service<PrepareEnvironment, Effect.Success<typeof make>>()(
  "prbox/engine/PrepareEnvironment"
) {
  static readonly layer = Layer.effect(PrepareEnvironment, make)
}
