import { type Bind, Docker, type PullAuth, type VolumeMount } from "@prbox/docker"
import { Effect, Layer, Option } from "effect"
import { Config } from "../Config.ts"
import { ContainerRuntime, type ContainerRuntimeShape } from "../ContainerRuntime.ts"
import { type ContainerState, hostMounts, LABELS } from "../ContainerSpec.ts"
import { ContainerExited, ImageBuildFailed, PortTaken, RuntimeError } from "../Errors.ts"
import { HelperOwner } from "../HelperOwner.ts"
import type { RegistryLogin } from "../RegistryAuth.ts"
import { carriedVolumesFor } from "./docker/CarriedVolumes.ts"
import { dockerRelayFor } from "./docker/DockerRelay.ts"
import { supervisedExecFor } from "./docker/ExecTimeout.ts"
import { filesModeFor } from "./docker/FilesMode.ts"
import { freePort } from "./docker/FreePort.ts"
import { helperLabels } from "./docker/HelperLabels.ts"
import { hostFoldersFor } from "./docker/HostFolders.ts"
import { hostPortsFor } from "./docker/HostPorts.ts"
import { ImageSource, imageTransferFor } from "./docker/ImageTransfer.ts"
import { withProgress } from "./docker/ProgressQueue.ts"
import { serviceContainersFor } from "./docker/ServiceContainers.ts"

const STOP_TIMEOUT_SECONDS = 10

const toRuntimeError = (error: { readonly message: string }) =>
  new RuntimeError({ operation: "docker", detail: error.message })

/**
 * Kubernetes' default pull policy: a `latest` (or untagged) image is pulled
 * on every create, a pinned tag only when it is missing.
 */
const pullsAlways = (image: string): boolean => {
  const name = image.split("/").at(-1) ?? image
  return !name.includes(":") || name.endsWith(":latest")
}

/** The engine's form of the user's login, for one pull. */
const pullAuth = ({ registry, credentials }: RegistryLogin): PullAuth =>
  credentials._tag === "Password"
    ? { serverAddress: registry, username: credentials.username, password: credentials.password }
    : { serverAddress: registry, identityToken: credentials.token }

/**
 * Containers on the Docker engine of the Docker service given (the local
 * socket, or a remote engine over SSH). The one place where Docker's types
 * (packages/docker) and the runtime port's (ContainerSpec, ContainerState)
 * meet. Where the engine sees this machine's files (probed once: FilesMode.ts)
 * a sandbox's folders are bind-mounted; elsewhere they are carried into
 * volumes (CarriedVolumes.ts). A remote engine's ports are forwarded here
 * (HostPorts.ts); images it lacks come from ImageSource, this machine's
 * engine (ImageTransfer.ts). `$PRBOX_HOME` (Config, when given) is where the
 * files probe looks; HelperOwner (when given) labels its helper containers.
 */
export const layer = Layer.effect(
  ContainerRuntime,
  Effect.gen(function* () {
    const docker = yield* Docker
    const ports = yield* hostPortsFor(docker)
    const home = Option.getOrUndefined(yield* Effect.serviceOption(Config))?.home
    // The labels of its helper containers: whose they are (HelperOwner, when given) and this process's maker.
    const helper = helperLabels(Option.getOrUndefined(yield* Effect.serviceOption(HelperOwner)))
    const files = yield* filesModeFor(docker, home, helper)
    const carried = yield* carriedVolumesFor(docker, helper)
    const folders = yield* hostFoldersFor(docker, helper)
    // A Compose sandbox's other services go with its container: started before it, stopped and removed with it.
    const services = serviceContainersFor(docker)

    const state = (containerId: string): Effect.Effect<ContainerState, RuntimeError> =>
      docker.inspect(containerId).pipe(
        Effect.map(
          (info): ContainerState =>
            info.state.running ? { _tag: "Running", hostPort: ports.reachedAt(info) } : { _tag: "Stopped" }
        ),
        Effect.catchTag("ContainerNotFound", () => Effect.succeed<ContainerState>({ _tag: "Absent" })),
        Effect.mapError(toRuntimeError)
      )

    const transfer = imageTransferFor(docker, yield* ImageSource)
    const previews = yield* dockerRelayFor(docker)
    const supervised = supervisedExecFor(docker)

    return ContainerRuntime.of({
      ensureImage: Effect.fn("NodeContainerRuntime.ensureImage")(function* (image, onProgress, login) {
        yield* files.remember(image)
        const brought = yield* withProgress(onProgress, (report) => transfer.bring(image, report))
        if (brought._tag === "Failure") return yield* brought.failure
        if (brought.success !== "not-local") return
        const present = yield* docker.imageExists(image).pipe(Effect.mapError(toRuntimeError))
        if (present && !pullsAlways(image)) return
        yield* onProgress(`pulling ${image}`)
        const auth = login === undefined ? undefined : pullAuth(login)
        const pulled = yield* withProgress(onProgress, (report) => docker.pullImage(image, report, auth))
        if (pulled._tag === "Success") return
        if (present) {
          yield* onProgress(`could not pull ${image} (${pulled.failure.message}); using the local copy`)
          return
        }
        // The failure's detail alone: its message already starts with the operation.
        return yield* new RuntimeError({ operation: "image.pull", detail: pulled.failure.detail })
      }),
      importImage: Effect.fn("NodeContainerRuntime.importImage")(function* (request, onProgress) {
        const imported = yield* withProgress(onProgress, (report) => docker.importImage(request, report))
        if (imported._tag === "Failure") return yield* toRuntimeError(imported.failure)
      }),
      buildImage: Effect.fn("NodeContainerRuntime.buildImage")(function* (request, onProgress) {
        const built = yield* withProgress(onProgress, (report) => docker.buildImage(request, report))
        if (built._tag === "Success") return built.success
        const failure = built.failure
        if (failure._tag !== "ImageBuildFailed") return yield* toRuntimeError(failure)
        return yield* new ImageBuildFailed({
          detail: failure.step === undefined ? failure.detail : `${failure.step}: ${failure.detail}`
        })
      }),
      imageInfo: (image) => docker.imageInfo(image).pipe(Effect.mapError(toRuntimeError)),
      commit: Effect.fn("NodeContainerRuntime.commit")(function* (containerId, { tag, base, labels }) {
        const image = yield* docker.imageInfo(base).pipe(Effect.mapError(toRuntimeError))
        if (image === undefined)
          return yield* new RuntimeError({ operation: "container.commit", detail: `${base} is not present` })
        const at = tag.lastIndexOf(":")
        const request = {
          repo: tag.slice(0, at),
          tag: tag.slice(at + 1),
          entrypoint: image.entrypoint,
          cmd: image.cmd,
          labels
        }
        return yield* docker.commitContainer(containerId, request).pipe(Effect.mapError(toRuntimeError))
      }),
      removeImage: (tag) =>
        docker.removeImage(tag).pipe(
          Effect.catchTag("ImageInUse", () => Effect.succeed("in-use" as const)),
          Effect.mapError(toRuntimeError)
        ),
      listImagesByLabel: (labels) => docker.listImagesByLabel(labels).pipe(Effect.mapError(toRuntimeError)),
      freePort,
      filesAt: files.filesAt,
      provision: Effect.fn("NodeContainerRuntime.provision")(function* (spec, onProgress = () => Effect.void) {
        const create = (mounts: {
          readonly binds: ReadonlyArray<Bind>
          readonly volumes: ReadonlyArray<VolumeMount>
        }) =>
          docker
            .createContainer(
              ports.publish({
                name: spec.name,
                image: spec.image,
                ...(spec.entrypoint === undefined ? {} : { entrypoint: spec.entrypoint }),
                cmd: spec.args,
                env: spec.env,
                labels: spec.labels,
                ...mounts,
                user: spec.user,
                workingDir: spec.workingDir,
                exposedPort: spec.port,
                ...(spec.hostPort === undefined ? {} : { hostPort: spec.hostPort }),
                ...(spec.relayPort === undefined ? {} : { extraPorts: [spec.relayPort] }),
                init: spec.init ?? true,
                ...(spec.cpus === undefined ? {} : { cpus: spec.cpus }),
                ...(spec.cpuShares === undefined ? {} : { cpuShares: spec.cpuShares }),
                ...(spec.memoryBytes === undefined ? {} : { memoryBytes: spec.memoryBytes }),
                ...(spec.pidsLimit === undefined ? {} : { pidsLimit: spec.pidsLimit }),
                ...(spec.privileged === undefined ? {} : { privileged: spec.privileged }),
                ...(spec.capAdd === undefined ? {} : { capAdd: spec.capAdd }),
                ...(spec.securityOpt === undefined ? {} : { securityOpt: spec.securityOpt }),
                ...(spec.hostname === undefined ? {} : { hostname: spec.hostname }),
                ...(spec.extraHosts === undefined ? {} : { extraHosts: spec.extraHosts }),
                ...(spec.shmSizeBytes === undefined ? {} : { shmSizeBytes: spec.shmSizeBytes }),
                capDrop: spec.capDrop
              })
            )
            .pipe(
              Effect.map((created) => created.id),
              Effect.mapError(toRuntimeError)
            )
        // The sandbox's own volumes, labelled as it is: its removal (and prune) finds them by label.
        const own = (spec.volumes ?? []).map((volume) => ({
          volume: volume.name,
          containerPath: volume.containerPath,
          readOnly: volume.readOnly,
          seed: true
        }))
        yield* Effect.forEach(own, ({ volume }) => docker.createVolume(volume, spec.labels), { discard: true }).pipe(
          Effect.mapError((error) => new RuntimeError({ operation: "volume.create", detail: error.message }))
        )
        // A bare container carries nothing: where the files are does not matter to it.
        const bare = (spec.carried ?? []).length === 0 && spec.shared === undefined
        if (bare || (yield* files.forSpec(spec.image, spec.labels)) === "host") {
          return yield* create({ binds: hostMounts(spec), volumes: own })
        }
        return yield* carried.provision(spec, onProgress, (volumes) =>
          create({ binds: [], volumes: [...volumes, ...own] })
        )
      }),
      start: Effect.fn("NodeContainerRuntime.start")(function* (containerId) {
        yield* services.start(containerId)
        yield* docker.start(containerId).pipe(
          Effect.catchTag("ContainerAlreadyStarted", () => Effect.void),
          Effect.mapError((error) =>
            error._tag === "PortInUse" ? new PortTaken({ detail: error.detail }) : toRuntimeError(error)
          )
        )
        const info = yield* docker.inspect(containerId).pipe(Effect.mapError(toRuntimeError))
        // Its command may have ended already: no port is published, and none ever will be.
        if (!info.state.running) return yield* new ContainerExited({ exitCode: info.state.exitCode })
        return yield* ports.started(info)
      }),
      attach: Effect.fn("NodeContainerRuntime.attach")(function* (containerId) {
        const info = yield* docker.inspect(containerId).pipe(
          Effect.catchTag("ContainerNotFound", () => Effect.succeed(undefined)),
          Effect.mapError(toRuntimeError)
        )
        if (info?.state.running === true) yield* ports.started(info)
      }),
      state,
      stop: (containerId) =>
        Effect.flatMap(services.sandboxOf(containerId), (sandbox) =>
          docker.stop(containerId, { timeoutSeconds: STOP_TIMEOUT_SECONDS }).pipe(
            Effect.as("stopped" as const),
            Effect.catchTag("ContainerAlreadyStopped", () => Effect.succeed("stopped" as const)),
            Effect.catchTag("ContainerNotFound", () => Effect.succeed("absent" as const)),
            Effect.mapError(toRuntimeError),
            // Only once it is confirmed down: a container a failed stop left running stays reachable.
            Effect.tap(() => ports.released(containerId)),
            Effect.tap(() => (sandbox === undefined ? Effect.void : services.stop(sandbox)))
          )
        ),
      destroy: Effect.fn("NodeContainerRuntime.destroy")(
        function* (containerId, options) {
          const labels = yield* docker.inspect(containerId).pipe(
            Effect.map((info) => info.labels),
            Effect.catchTag("ContainerNotFound", () => Effect.succeed(undefined)),
            Effect.mapError(toRuntimeError)
          )
          const removed = yield* docker.remove(containerId, { force: true, volumes: true }).pipe(
            Effect.as("removed" as const),
            Effect.catchTag("ContainerNotFound", () => Effect.succeed("absent" as const)),
            Effect.mapError(toRuntimeError)
          )
          const sandbox = labels?.[LABELS.sandbox]
          if (sandbox !== undefined && labels?.[LABELS.service] === undefined) yield* services.remove(sandbox)
          // Found by the sandbox's label: a container already gone leaves its volumes to prune.
          if (labels !== undefined && options?.keepFiles !== true) yield* carried.removeSandboxVolumes(labels)
          return removed
        },
        (effect, containerId) =>
          Effect.ensuring(effect, Effect.andThen(ports.released(containerId), previews.forget(containerId)))
      ),
      // CwdRefused only ever comes with `within`, as the port's overloads say.
      exec: supervised.exec as ContainerRuntimeShape["exec"],
      spawn: supervised.spawn,
      pipe: (containerId, argv, options, onStderr) =>
        docker.execPipe(containerId, { argv, ...options }, onStderr).pipe(
          Effect.map((pipe) => ({ ...pipe, exitCode: pipe.exitCode.pipe(Effect.mapError(toRuntimeError)) })),
          Effect.mapError(toRuntimeError)
        ),
      connect: previews.connect,
      listeningPorts: previews.listeningPorts,
      sealFolder: folders.seal,
      clearFolder: folders.clear,
      readFolder: folders.read,
      fillFolder: folders.fill,
      copyIntoFolders: folders.copy,
      hasPath: (containerId, path) => docker.hasPath(containerId, path).pipe(Effect.mapError(toRuntimeError)),
      awaitOutputLine: (containerId, since, matches) =>
        docker.awaitLogLine(containerId, { since, matches }).pipe(Effect.mapError(toRuntimeError)),
      listFilesByLabel: (labels) => docker.listVolumesByLabel(labels).pipe(Effect.mapError(toRuntimeError)),
      removeFiles: (name) => docker.removeVolume(name).pipe(Effect.asVoid, Effect.mapError(toRuntimeError)),
      listByLabel: (labels) =>
        docker.listByLabel(labels, { all: true }).pipe(
          Effect.map((containers) =>
            containers.map((container) => ({
              containerId: container.id,
              running: container.state === "running",
              labels: container.labels
            }))
          ),
          Effect.mapError(toRuntimeError)
        )
    })
  })
)
