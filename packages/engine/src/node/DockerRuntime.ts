import { Docker } from "@prbox/docker"
import { Effect, Fiber, Layer, Queue } from "effect"
import { ContainerRuntime, type ContainerRuntimeShape, type ContainerState } from "../ContainerRuntime.ts"
import { ContainerExited, ImageBuildFailed, PortTaken, RuntimeError } from "../Errors.ts"
import { makeDockerRelay } from "./DockerRelay.ts"
import { freePort } from "./FreePort.ts"
import { makeHostPorts } from "./HostPorts.ts"
import { ImageSource, makeImageTransfer } from "./ImageTransfer.ts"
import { makeSupervisedExec } from "./SupervisedExec.ts"

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

/**
 * Containers on the Docker engine of the Docker service given (the local
 * socket, or a remote engine over SSH: its ports are forwarded here, see
 * HostPorts.ts; images it lacks come from ImageSource, this machine's
 * engine, see ImageTransfer.ts). The one place where Docker's types
 * (packages/docker) and the runtime port's (ContainerSpec, ContainerState) meet.
 */
export const layer = Layer.effect(
  ContainerRuntime,
  Effect.gen(function* () {
    const docker = yield* Docker
    const ports = yield* makeHostPorts(docker)

    /**
     * Docker reports progress through a plain callback; a queue hands the
     * lines to the caller's effect in order, repeated lines once.
     */
    const withProgress = <A, E>(
      onProgress: (line: string) => Effect.Effect<void>,
      run: (report: (line: string) => void) => Effect.Effect<A, E>
    ) =>
      Effect.gen(function* () {
        const lines = yield* Queue.unbounded<string>()
        const forward = yield* Queue.take(lines).pipe(Effect.flatMap(onProgress), Effect.forever, Effect.forkChild)
        let last = ""
        const result = yield* Effect.result(
          run((line) => {
            if (line !== last) Queue.offerUnsafe(lines, line)
            last = line
          })
        )
        yield* Fiber.interrupt(forward)
        for (const line of yield* Queue.clear(lines)) yield* onProgress(line)
        return result
      })

    const state = (containerId: string): Effect.Effect<ContainerState, RuntimeError> =>
      docker.inspect(containerId).pipe(
        Effect.map(
          (info): ContainerState =>
            info.state.running ? { _tag: "Running", hostPort: ports.reachedAt(info) } : { _tag: "Stopped" }
        ),
        Effect.catchTag("ContainerNotFound", () => Effect.succeed<ContainerState>({ _tag: "Absent" })),
        Effect.mapError(toRuntimeError)
      )

    const transfer = makeImageTransfer(docker, yield* ImageSource)
    const previews = yield* makeDockerRelay(docker)
    const supervised = makeSupervisedExec(docker)

    return ContainerRuntime.of({
      filesAt: Effect.succeed("host"),
      ensureImage: Effect.fn("DockerRuntime.ensureImage")(function* (image, onProgress) {
        const brought = yield* withProgress(onProgress, (report) => transfer.bring(image, report))
        if (brought._tag === "Failure") return yield* brought.failure
        if (brought.success !== "not-local") return
        const present = yield* docker.imageExists(image).pipe(Effect.mapError(toRuntimeError))
        if (present && !pullsAlways(image)) return
        yield* onProgress(`pulling ${image}`)
        const pulled = yield* withProgress(onProgress, (report) => docker.pullImage(image, report))
        if (pulled._tag === "Success") return
        if (present) {
          yield* onProgress(`could not pull ${image} (${pulled.failure.message}); using the local copy`)
          return
        }
        return yield* new RuntimeError({ operation: "image.pull", detail: pulled.failure.message })
      }),
      importImage: Effect.fn("DockerRuntime.importImage")(function* (request, onProgress) {
        const imported = yield* withProgress(onProgress, (report) => docker.importImage(request, report))
        if (imported._tag === "Failure") return yield* toRuntimeError(imported.failure)
      }),
      buildImage: Effect.fn("DockerRuntime.buildImage")(function* (request, onProgress) {
        const built = yield* withProgress(onProgress, (report) => docker.buildImage(request, report))
        if (built._tag === "Success") return built.success
        const failure = built.failure
        if (failure._tag !== "ImageBuildFailed") return yield* toRuntimeError(failure)
        return yield* new ImageBuildFailed({
          detail: failure.step === undefined ? failure.detail : `${failure.step}: ${failure.detail}`
        })
      }),
      imageInfo: (image) => docker.imageInfo(image).pipe(Effect.mapError(toRuntimeError)),
      freePort,
      provision: Effect.fn("DockerRuntime.provision")(function* (spec) {
        const created = yield* docker
          .createContainer(
            ports.publish({
              name: spec.name,
              image: spec.image,
              ...(spec.entrypoint === undefined ? {} : { entrypoint: spec.entrypoint }),
              cmd: spec.args,
              env: spec.env,
              labels: spec.labels,
              binds: spec.binds,
              user: spec.user,
              workingDir: spec.workingDir,
              exposedPort: spec.port,
              ...(spec.hostPort === undefined ? {} : { hostPort: spec.hostPort }),
              ...(spec.relayPort === undefined ? {} : { extraPorts: [spec.relayPort] }),
              init: true,
              ...(spec.cpus === undefined ? {} : { cpus: spec.cpus }),
              ...(spec.memoryBytes === undefined ? {} : { memoryBytes: spec.memoryBytes }),
              ...(spec.pidsLimit === undefined ? {} : { pidsLimit: spec.pidsLimit }),
              ...(spec.privileged === undefined ? {} : { privileged: spec.privileged }),
              ...(spec.capAdd === undefined ? {} : { capAdd: spec.capAdd }),
              ...(spec.securityOpt === undefined ? {} : { securityOpt: spec.securityOpt })
            })
          )
          .pipe(Effect.mapError(toRuntimeError))
        return created.id
      }),
      start: Effect.fn("DockerRuntime.start")(function* (containerId) {
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
      attach: Effect.fn("DockerRuntime.attach")(function* (containerId) {
        const info = yield* docker.inspect(containerId).pipe(
          Effect.catchTag("ContainerNotFound", () => Effect.succeed(undefined)),
          Effect.mapError(toRuntimeError)
        )
        if (info?.state.running === true) yield* ports.started(info)
      }),
      state,
      stop: (containerId) =>
        docker.stop(containerId, { timeoutSeconds: STOP_TIMEOUT_SECONDS }).pipe(
          Effect.as("stopped" as const),
          Effect.catchTag("ContainerAlreadyStopped", () => Effect.succeed("stopped" as const)),
          Effect.catchTag("ContainerNotFound", () => Effect.succeed("absent" as const)),
          Effect.mapError(toRuntimeError),
          // Only once it is confirmed down: a container a failed stop left running stays reachable.
          Effect.tap(() => ports.released(containerId))
        ),
      destroy: (containerId) =>
        docker.remove(containerId, { force: true, volumes: true }).pipe(
          Effect.ensuring(Effect.andThen(ports.released(containerId), previews.forget(containerId))),
          Effect.as("removed" as const),
          Effect.catchTag("ContainerNotFound", () => Effect.succeed("absent" as const)),
          Effect.mapError(toRuntimeError)
        ),
      // CwdRefused only ever comes with `within`, as the port's overloads say.
      exec: supervised.exec as ContainerRuntimeShape["exec"],
      spawn: supervised.spawn,
      connect: previews.connect,
      listeningPorts: previews.listeningPorts,
      hasPath: (containerId, path) => docker.hasPath(containerId, path).pipe(Effect.mapError(toRuntimeError)),
      awaitOutputLine: (containerId, since, matches) =>
        docker.awaitLogLine(containerId, { since, matches }).pipe(Effect.mapError(toRuntimeError)),
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
