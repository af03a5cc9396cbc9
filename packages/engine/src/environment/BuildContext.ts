import { dockerfileImages } from "@prbox/devcontainer"
import type { Sandbox } from "@prbox/domain"
import { imageRegistry, posixPath } from "@prbox/domain"
import { Effect, type FileSystem } from "effect"
import type { ContainerRuntime } from "../ContainerRuntime.ts"
import { SetupFailed } from "../Errors.ts"
import { localRegistryRefusal } from "../RegistryAuth.ts"
import { workspaceFiles } from "./ChooseEnvironment.ts"
import { engineWorkspaceFiles, stageContext } from "./EngineWorkspace.ts"

/** What an environment is prepared for: a sandbox, or a prebuild of its repository. */
export type EnvironmentOwner = Pick<Sandbox, "id" | "host" | "repository">

/** Image names for builds: one repository per PR repository, the tag is the build inputs' hash. */
export const buildRepository = (row: EnvironmentOwner): string =>
  `prbox-build/${`${row.host ?? "local"}/${row.repository}`.toLowerCase().replace(/[^a-z0-9._-]+/g, "-")}`

/**
 * Where a build reads the workspace: by host path (an open, before any
 * container of the sandbox ran) or through the engine (`labels` on the
 * throwaway container it takes).
 */
export type BuildFiles =
  | { readonly _tag: "Host" }
  | { readonly _tag: "Engine"; readonly labels: Readonly<Record<string, string>> }

/**
 * The folder a build's context is packed from. At an open, before any
 * container of the sandbox ran, the workspace's own, checked here through
 * no link; after, a copy the engine reads (EngineWorkspace.ts): the host
 * resolves nothing in a folder a container may have written. With it, the
 * Dockerfile's text, read the same way (for `checkPulledImages`).
 */
export const contextFolder = (
  fs: FileSystem.FileSystem,
  runtime: ContainerRuntime["Service"],
  path: string,
  workspacePath: string,
  context: string,
  dockerfile: string,
  inContext: string,
  readFrom: BuildFiles
) =>
  Effect.gen(function* () {
    const notFolder = new SetupFailed({
      reason: `${path}: build.context ${context} is not a folder of the workspace`
    })
    const notDockerfile = new SetupFailed({
      reason: `${path}: build.dockerfile ${dockerfile} is not a file of the workspace`
    })
    if (readFrom._tag === "Engine") {
      const staged = yield* stageContext(fs, runtime, workspacePath, context, inContext, readFrom.labels).pipe(
        Effect.mapError(
          (error) => new SetupFailed({ reason: `${path}: the build's context cannot be read (${error.message})` })
        )
      )
      if (staged === undefined) {
        return yield* new SetupFailed({
          reason: `${path}: build.context ${context} is not a folder of the workspace (a symbolic link is not followed)`
        })
      }
      const text = yield* engineWorkspaceFiles(runtime, workspacePath, readFrom.labels)
        .read(dockerfile)
        .pipe(Effect.mapError((error) => new SetupFailed({ reason: `${path}: the build's ${error.message}` })))
      if (text === undefined) return yield* notDockerfile
      return { dir: staged, dockerfileText: text }
    }
    const files = workspaceFiles(fs, workspacePath)
    const unsafe = (error: { readonly message: string }) =>
      new SetupFailed({ reason: `${path}: the build's ${error.message}` })
    if ((yield* files.list(context).pipe(Effect.mapError(unsafe))) === undefined) return yield* notFolder
    const text = yield* files.read(dockerfile).pipe(Effect.mapError(unsafe))
    if (text === undefined) return yield* notDockerfile
    return { dir: posixPath.join(workspacePath, context), dockerfileText: text }
  })

/**
 * A Dockerfile build of the workspace's files (devcontainer.json's
 * `build`, or a Compose service's), tagged by its inputs' hash: an
 * unchanged one is reused, and says so. `what` names it in progress lines.
 */
export const buildFromWorkspace = (
  fs: FileSystem.FileSystem,
  runtime: ContainerRuntime["Service"],
  input: {
    readonly row: EnvironmentOwner
    readonly path: string
    readonly what: string
    readonly build: {
      readonly context: string
      readonly dockerfile: string
      readonly args: Readonly<Record<string, string>>
      readonly target?: string | undefined
    }
    readonly workspacePath: string
    readonly readFrom: BuildFiles
    /** config.json's localRegistries: what the Dockerfile may pull from this machine. */
    readonly localRegistries: ReadonlyArray<string>
    readonly onProgress: (line: string) => Effect.Effect<void>
  }
) =>
  Effect.gen(function* () {
    const { context, dockerfile, args, target } = input.build
    // Outside the context it is "../…", which the build refuses.
    const inContext = posixPath.relative(posixPath.normalize(context), dockerfile)
    const built = yield* Effect.scoped(
      Effect.gen(function* () {
        const { dir: contextDir, dockerfileText } = yield* contextFolder(
          fs,
          runtime,
          input.path,
          input.workspacePath,
          context,
          dockerfile,
          inContext,
          input.readFrom
        )
        yield* checkPulledImages(input.path, dockerfile, dockerfileText, args, input.localRegistries)
        yield* input.onProgress(`building ${dockerfile} (${input.what})`)
        return yield* runtime.buildImage(
          {
            contextDir,
            dockerfile: inContext,
            args,
            ...(target === undefined ? {} : { target }),
            repository: buildRepository(input.row),
            labels: {}
          },
          input.onProgress
        )
      })
    )
    if (built.reused) yield* input.onProgress(`reusing ${built.tag}: its inputs did not change`)
    return built.tag
  })

/**
 * The rule a PR's image and features are held to (RegistryAuth.ts
 * `localRegistryRefusal`), for every image its Dockerfile makes the engine
 * pull (each stage's FROM, `--from`, the syntax frontend), before the build:
 * a registry on this machine only when config.json's localRegistries lists
 * it. A Dockerfile whose images cannot be read is refused, never built unchecked.
 */
export const checkPulledImages = (
  path: string,
  dockerfile: string,
  text: string,
  args: Readonly<Record<string, string>>,
  localRegistries: ReadonlyArray<string>
): Effect.Effect<void, SetupFailed> => {
  const read = dockerfileImages(text, args)
  if (!read.ok) return Effect.fail(new SetupFailed({ reason: `${path}: ${dockerfile}: ${read.detail}` }))
  for (const image of read.images) {
    const registry = imageRegistry(image)
    const refused = registry === undefined ? undefined : localRegistryRefusal(registry, localRegistries)
    if (refused !== undefined)
      return Effect.fail(new SetupFailed({ reason: `${path}: ${dockerfile}: image ${image}: ${refused}` }))
  }
  return Effect.void
}
