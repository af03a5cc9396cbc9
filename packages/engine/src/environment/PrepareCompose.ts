/**
 * A Compose devcontainer made ready to run: its files copied from the PR's
 * commit into prbox's state (ComposeFiles.ts), rendered by the user's
 * Compose (a scrubbed environment), checked (the devcontainer package's
 * rules, per service), what it binds from the repository copied in, each
 * `build` built by the engine as a Dockerfile build is (Compose never
 * builds), each image pulled by prbox (RegistryAuth's rules), and the
 * checked project written beside the copy (0600) for the container step.
 */
import {
  type CheckedCompose,
  type ComposeSource,
  checkComposeProject,
  composeIgnored,
  type DevcontainerSpec,
  parseRenderedCompose
} from "@prbox/devcontainer"
import { posixPath } from "@prbox/domain"
import { Effect, type FileSystem } from "effect"
import type { ComposeCli } from "../ComposeCli.ts"
import type { PrboxConfig } from "../Config.ts"
import type { ContainerRuntime } from "../ContainerRuntime.ts"
import { SetupFailed } from "../Errors.ts"
import { type BuildFiles, buildFromWorkspace, type EnvironmentOwner } from "./BuildContext.ts"
import type { EnvironmentChoice, RepositoryFiles } from "./ChooseEnvironment.ts"
import { bindSource, bindSources, type Json, sealNestedBinds, volumeTarget } from "./ComposeBinds.ts"
import { composeFolder, copyBindSources, copyComposeFiles } from "./ComposeFiles.ts"
import { composeProjectName } from "./ComposeOverlay.ts"
import { InvalidDevcontainer } from "./Errors.ts"

/** The app service's own command, as Docker runs a service's: its entrypoint and command over the image's. */
export const serviceCommand = (
  service: Json,
  image: { readonly entrypoint: ReadonlyArray<string> | null; readonly cmd: ReadonlyArray<string> | null }
): ReadonlyArray<string> => {
  const words = (value: unknown): ReadonlyArray<string> | undefined =>
    Array.isArray(value)
      ? value.filter((word): word is string => typeof word === "string")
      : typeof value === "string"
        ? ["/bin/sh", "-c", value]
        : undefined
  const entrypoint = words(service.entrypoint)
  const command = words(service.command)
  // An entrypoint set by the service drops the image's CMD, as Docker does.
  if (entrypoint !== undefined) return [...entrypoint, ...(command ?? [])]
  return [...(image.entrypoint ?? []), ...(command ?? image.cmd ?? [])]
}

export interface PreparedCompose {
  readonly checked: CheckedCompose
  /** What the configuration asks that prbox leaves out: devcontainer.json's (composeIgnored), then the services'. */
  readonly ignored: ReadonlyArray<{ readonly property: string; readonly detail: string }>
  /** The checked project, built images' tags written in. */
  readonly project: Json
  /** Where it is written (the container step reads it). */
  readonly file: string
  /** The app service's image: built here, or named by the service. */
  readonly image: string
  /** prbox's copy of the repository (the rendered project's paths are under it). */
  readonly repository: string
  /** Images of the services prbox pulls before Compose runs (none built). */
  readonly pulls: ReadonlyArray<string>
}

/**
 * A Compose devcontainer refused before its sandbox is admitted, as a bad
 * devcontainer.json is: no Compose on this machine (neither `docker
 * compose` nor `docker-compose`), or a remote engine. What needs the
 * rendered project (a build context outside, build.ssh, an unknown key) is
 * refused after admission, by prepareCompose.
 */
export const admitCompose = (compose: ComposeCli["Service"], choice: EnvironmentChoice) =>
  choice._tag === "Devcontainer" && choice.spec.source._tag === "Compose"
    ? compose.version.pipe(
        Effect.asVoid,
        Effect.mapError(
          (error) => new InvalidDevcontainer({ reason: `${choice.spec.path}: dockerComposeFile: ${error.detail}` })
        )
      )
    : Effect.void

/** What the Compose steps run with: files, the engine, the user's Compose, `$PRBOX_HOME`. */
export interface ComposeDeps {
  readonly fs: FileSystem.FileSystem
  readonly runtime: ContainerRuntime["Service"]
  readonly compose: ComposeCli["Service"]
  readonly home: string
}

export const prepareCompose = Effect.fn("SandboxService.prepareCompose")(function* (
  deps: ComposeDeps,
  input: {
    readonly row: EnvironmentOwner
    readonly spec: DevcontainerSpec
    readonly source: ComposeSource
    readonly files: RepositoryFiles
    readonly config: PrboxConfig
    readonly workspacePath: string
    readonly readFrom: BuildFiles
    readonly onProgress: (line: string) => Effect.Effect<void>
  }
) {
  const { fs, runtime, compose, home } = deps
  const { row, spec, source, files, config, onProgress } = input
  const folder = composeFolder(home, row.id)
  const refused = (error: { readonly message: string }) => new SetupFailed({ reason: error.message })
  // What Compose reads on the host while it renders (env_file, extends.file, include) is checked to be the repository's, and copied.
  yield* copyComposeFiles(fs, files, folder, source.files, spec.trusted)
  const absolute = source.files.map((path) => posixPath.join(folder.repository, path))
  const directory = posixPath.dirname(absolute[0] ?? folder.repository)
  yield* onProgress(`rendering ${source.files.join(", ")} (${yield* compose.version.pipe(Effect.mapError(refused))})`)
  const rendered = yield* compose
    .render({ name: composeProjectName(row.id), directory }, absolute)
    .pipe(Effect.mapError((error) => new SetupFailed({ reason: `${spec.path}: dockerComposeFile: ${error.message}` })))
  const parsed = yield* parseRenderedCompose(rendered).pipe(Effect.mapError(refused))
  const checked = yield* checkComposeProject(parsed, {
    file: spec.path,
    service: source.service,
    runServices: source.runServices,
    repositoryRoot: folder.repository,
    trusted: spec.trusted,
    untrustedWidening: config.untrustedWidening,
    withheld: spec.withheld
  }).pipe(Effect.mapError(refused))
  for (const warning of checked.warnings) yield* onProgress(`warning: ${warning}`)
  const ignored = [...composeIgnored(source), ...checked.ignored]
  for (const left of composeIgnored(source)) yield* onProgress(`warning: ${left.property} ${left.detail}`)
  const { project, sealed } = sealNestedBinds(JSON.parse(JSON.stringify(checked.project)))
  for (const entry of sealed) {
    yield* onProgress(`warning: ${entry} is mounted read-only: it holds another bind mount's source`)
  }
  yield* copyBindSources(fs, files, folder, bindSources(project))
  const services = project.services as Record<string, Json>
  for (const build of checked.builds) {
    const tag = yield* buildFromWorkspace(fs, runtime, {
      row,
      path: spec.path,
      what: `service ${build.service}`,
      build,
      workspacePath: input.workspacePath,
      readFrom: input.readFrom,
      localRegistries: config.localRegistries,
      onProgress
    })
    const service = services[build.service]
    if (service !== undefined) services[build.service] = { ...service, image: tag }
  }
  const builtServices = new Set(checked.builds.map((build) => build.service))
  const pulls = checked.services.flatMap((name) => {
    const image = services[name]?.image
    return builtServices.has(name) || typeof image !== "string" ? [] : [image]
  })
  const app = services[source.service]
  const image = typeof app?.image === "string" ? app.image : undefined
  if (image === undefined) {
    return yield* new SetupFailed({ reason: `${spec.path}: service ${source.service} has neither image nor build` })
  }
  const file = posixPath.join(folder.root, "checked.json")
  yield* fs
    .writeFileString(file, JSON.stringify(project), { mode: 0o600 })
    .pipe(
      Effect.mapError(
        (error) => new SetupFailed({ reason: `the Compose project cannot be written (${error.message})` })
      )
    )
  return { checked, ignored, project, file, image, pulls, repository: folder.repository } satisfies PreparedCompose
})

/**
 * Where the workspace goes in the app service: devcontainer.json's
 * `workspaceFolder`; when it leaves Compose's default (`/`), where the
 * service binds the repository's root (`..:/workspace`), else
 * `/workspaces/<repository>`: prbox mounts its checkout there.
 */
export const composeWorkspaceFolder = (
  asked: string,
  app: Json | undefined,
  repositoryRoot: string,
  repositoryName: string
): string => {
  if (asked !== "/") return asked
  const volumes = app !== undefined && Array.isArray(app.volumes) ? app.volumes : []
  for (const entry of volumes) {
    const target = volumeTarget(entry)
    if (bindSource(entry) === repositoryRoot && target !== undefined && target !== "/") return target
  }
  return `/workspaces/${repositoryName}`
}
