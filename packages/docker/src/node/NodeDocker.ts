import { Readable } from "node:stream"
import Dockerode, { type DockerOptions } from "dockerode"
import { Effect, Layer, type Scope } from "effect"
import { Docker } from "../Docker.ts"
import {
  BindSourceMissing,
  ContainerAlreadyStarted,
  ContainerAlreadyStopped,
  ContainerNotFound,
  DockerEngineError,
  EngineUnavailable,
  EnumerationError,
  ExecTimeout,
  ImageNotFound,
  NameConflict,
  PortInUse
} from "../DockerError.ts"
import type { ExecResult } from "../DockerTypes.ts"
import { containerCreateOptions } from "./ContainerCreate.ts"
import { demuxStream } from "./Demux.ts"
import { InspectAnswer, ListAnswer, toInfo, toSummary, VersionAnswer } from "./EngineAnswers.ts"
import { call, decode, envList, labelFilters } from "./EngineCall.ts"
import { cappedSink } from "./ExecOutput.ts"
import { makeExecPipe } from "./ExecPipe.ts"
import { createExec, exitCodeOf, makeExecStreamed, runExec } from "./ExecStream.ts"

import { makeAwaitLogLine } from "./LogFollow.ts"
import { localLoopback, sshLoopback } from "./Loopback.ts"
import { commitOperations } from "./NodeCommit.ts"
import { imageOperations } from "./NodeImages.ts"
import { volumeOperations } from "./NodeVolumes.ts"
import * as SshTransport from "./SshTransport.ts"

export interface Options {
  /**
   * Unix socket of the engine. Without it docker-modem reads DOCKER_HOST
   * (unix://, tcp://, ssh://, with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH) and
   * falls back to the local socket.
   */
  readonly socketPath?: string
  /** A plain-HTTP engine (`tcp://host:port` named by config.json or a Docker context); ignored with socketPath. */
  readonly tcp?: { readonly host: string; readonly port: number }
  /**
   * An engine over SSH, `ssh://user@host[:port]`: one connection for every
   * request (SshTransport.ts), its host key checked against `knownHostsFile`
   * (default ~/.ssh/known_hosts), the user authenticated by the ssh-agent,
   * then `identityFile` (default ~/.ssh/id_ed25519, id_ecdsa, id_rsa).
   */
  readonly address?: string
  readonly knownHostsFile?: string
  readonly identityFile?: string
  /** An SSH transport already made (shared with its port forwards); takes the place of `address`. */
  readonly ssh?: SshTransport.SshTransport
  /** Longest a request may wait for the engine between bytes; a hung engine fails with EngineUnavailable. */
  readonly requestTimeoutMs?: number
}

const defaultRequestTimeoutMs = 30_000

// Taken by another container ("port is already allocated") or by a host process ("address already in use").
const portTaken = /port is already allocated|address already in use/i
const bindSourceMissing = /bind source path does not exist/i

/**
 * An engine error whose message matches `pattern` becomes the typed error
 * `Typed` (the engine gives these no status of their own); others stay as they are.
 */
const reclassify =
  <T>(pattern: RegExp, Typed: new (fields: { readonly operation: string; readonly detail: string }) => T) =>
  (error: DockerEngineError): Effect.Effect<never, T | DockerEngineError> =>
    Effect.fail(pattern.test(error.detail) ? new Typed({ operation: error.operation, detail: error.detail }) : error)

/** The SSH transport `options` name, if any: the one given, or one made for `address` (closed with the scope). */
const sshTransport = (options: Options) =>
  options.ssh !== undefined
    ? Effect.succeed(options.ssh)
    : options.address === undefined
      ? Effect.succeed(undefined)
      : SshTransport.make({
          address: options.address,
          knownHostsFile: options.knownHostsFile,
          identityFile: options.identityFile
        })

export const make = (options: Options = {}): Effect.Effect<Docker["Service"], EngineUnavailable, Scope.Scope> =>
  Effect.gen(function* () {
    const requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs
    const ssh = yield* sshTransport(options)
    // Dockerode clients hold no connection, so a client per timeout is cheap.
    const client = (operation: string, timeout: number) =>
      Effect.try({
        try: () =>
          ssh !== undefined
            ? // The host only names the engine in URLs: the agent's sockets are SSH channels (docker-modem
              // passes `agent` to node:http; its types omit it).
              new Dockerode({ host: "docker", port: 80, protocol: "http", agent: ssh.agent, timeout } as DockerOptions)
            : options.socketPath !== undefined
              ? // An empty host and plain http keep a DOCKER_HOST from the environment from overriding the socket.
                new Dockerode({ socketPath: options.socketPath, host: "", protocol: "http", timeout })
              : options.tcp !== undefined
                ? new Dockerode({ host: options.tcp.host, port: options.tcp.port, protocol: "http", timeout })
                : new Dockerode({ timeout }),
        catch: (cause) => new EngineUnavailable({ operation, detail: String(cause) })
      })
    const api = yield* client("engine.connect", requestTimeoutMs)
    const patient = yield* client("engine.connect", 0)

    return Docker.of({
      // A tcp:// engine has no way to its 127.0.0.1 from here: taken as local, as it always was.
      loopback: ssh === undefined ? localLoopback : sshLoopback(ssh),

      ping: Effect.fn("Docker.ping")(function* () {
        yield* call("engine.ping", () => api.ping(), {})
      }),

      version: Effect.fn("Docker.version")(function* () {
        const answer = yield* call("engine.version", () => api.version(), {}).pipe(
          Effect.flatMap(decode("engine.version", VersionAnswer))
        )
        return { version: answer.Version, apiVersion: answer.ApiVersion }
      }),

      ...imageOperations(api, patient),
      ...commitOperations(api, patient),
      ...volumeOperations(api, patient),

      createContainer: Effect.fn("Docker.createContainer")(function* (spec) {
        const env = yield* envList("container.create", spec.env)
        const container = yield* call(
          "container.create",
          () => api.createContainer(containerCreateOptions(spec, env)),
          { 404: ImageNotFound, 409: NameConflict },
          Object.values(spec.env)
        ).pipe(
          // Only the engine's message tells a missing bind source from another refusal.
          Effect.catchTag("DockerEngineError", reclassify(bindSourceMissing, BindSourceMissing))
        )
        return { id: container.id }
      }),

      start: Effect.fn("Docker.start")(function* (id) {
        yield* call("container.start", () => api.getContainer(id).start(), {
          404: ContainerNotFound,
          304: ContainerAlreadyStarted
        }).pipe(
          // The engine has no status of its own for it: only its message says so.
          Effect.catchTag("DockerEngineError", reclassify(portTaken, PortInUse))
        )
      }),

      stop: Effect.fn("Docker.stop")(function* (id, { timeoutSeconds }) {
        // The engine answers only once the container is down, up to timeoutSeconds later.
        const patient = yield* client("container.stop", requestTimeoutMs + timeoutSeconds * 1000)
        yield* call("container.stop", () => patient.getContainer(id).stop({ t: timeoutSeconds }), {
          404: ContainerNotFound,
          304: ContainerAlreadyStopped
        })
      }),

      inspect: Effect.fn("Docker.inspect")(function* (id) {
        const answer = yield* call("container.inspect", () => api.getContainer(id).inspect(), {
          404: ContainerNotFound
        }).pipe(Effect.flatMap(decode("container.inspect", InspectAnswer)))
        return toInfo(answer)
      }),

      remove: Effect.fn("Docker.remove")(function* (id, { force, volumes }) {
        yield* call("container.remove", () => api.getContainer(id).remove({ force, v: volumes }), {
          404: ContainerNotFound
        })
      }),

      listByLabel: Effect.fn("Docker.listByLabel")(function* (labels, { all }) {
        const answer = yield* call(
          "container.list",
          () => api.listContainers({ all, filters: labelFilters(labels) }),
          {}
        ).pipe(
          Effect.flatMap(decode("container.list", ListAnswer)),
          // Whatever went wrong, the caller must not mistake it for "no containers".
          // Its detail alone: its message would name the operation a second time.
          Effect.mapError((error) => new EnumerationError({ operation: "container.list", detail: error.detail }))
        )
        return answer.map(toSummary)
      }),

      exec: Effect.fn("Docker.exec")(function* (id, options) {
        const secrets = Object.values(options.env ?? {})
        const exec = yield* createExec(api, id, options, { attach: true })
        const output = yield* runExec(exec, options.maxOutputBytes, secrets).pipe(
          Effect.timeoutOrElse({
            duration: options.timeoutMs,
            orElse: () =>
              Effect.fail(
                new ExecTimeout({
                  operation: "container.exec",
                  detail: `no exit within ${options.timeoutMs} ms`,
                  timeoutMs: options.timeoutMs
                })
              )
          })
        )
        const result: ExecResult = { exitCode: yield* exitCodeOf(exec, secrets), ...output }
        return result
      }),

      execStreamed: makeExecStreamed(api),

      execPipe: makeExecPipe(api),

      execDetached: Effect.fn("Docker.execDetached")(function* (id, options) {
        const secrets = Object.values(options.env ?? {})
        const exec = yield* createExec(api, id, options, { attach: false })
        // The engine answers once the process is started; its (empty) body is drained to free the connection.
        yield* call(
          "container.exec",
          () => exec.start({ Detach: true }).then((answer: Readable | undefined) => void answer?.resume()),
          { 404: ContainerNotFound },
          secrets
        )
      }),

      hasPath: Effect.fn("Docker.hasPath")(function* (id, path) {
        // The answer is headers only; its stream is drained to free the connection.
        const found = yield* call(
          "container.archive",
          () =>
            api
              .getContainer(id)
              .infoArchive({ path })
              .then((answer: Readable) => void answer.resume()),
          {
            404: ContainerNotFound
          }
        ).pipe(
          Effect.as(true),
          Effect.catchTag("ContainerNotFound", () => Effect.succeed(false))
        )
        if (found) return true
        // A HEAD answer has no body to tell a missing path from a missing
        // container: the container must still exist for "no such path".
        yield* call("container.inspect", () => api.getContainer(id).inspect(), { 404: ContainerNotFound })
        return false
      }),

      awaitLogLine: makeAwaitLogLine(api),

      logs: Effect.fn("Docker.logs")(function* (id, { tail, since }) {
        const raw = yield* call(
          "container.logs",
          () =>
            api.getContainer(id).logs({
              stdout: true,
              stderr: true,
              follow: false,
              tail,
              since: since === undefined ? undefined : Math.floor(since.getTime() / 1000)
            }),
          { 404: ContainerNotFound }
        )
        if (!Buffer.isBuffer(raw)) {
          return yield* new DockerEngineError({ operation: "container.logs", detail: "unexpected answer" })
        }
        const output = cappedSink(Number.POSITIVE_INFINITY)
        const source = Readable.from([raw])
        demuxStream(source, output.sink, output.sink)
        yield* Effect.callback<void>((resume) => {
          source.on("end", () => resume(Effect.void))
        })
        return output.text()
      })
    })
  })

/** The Docker service on dockerode; see Options for how the engine is found. */
export const layer = (options: Options = {}): Layer.Layer<Docker, EngineUnavailable> =>
  Layer.effect(Docker, make(options))
