import { Readable, Writable } from "node:stream"
import Dockerode from "dockerode"
import { Effect, Layer, Schedule, Schema } from "effect"
import type { ContainerInfo, ContainerSummary, ExecResult } from "./Docker.ts"
import { Docker } from "./Docker.ts"
import {
  ContainerAlreadyStarted,
  ContainerAlreadyStopped,
  ContainerNotFound,
  DockerEngineError,
  EngineUnavailable,
  EnumerationError,
  type ErrorFields,
  ExecTimeout,
  ImageNotFound,
  ImagePullFailed,
  NameConflict
} from "./DockerError.ts"

export interface Options {
  /**
   * Unix socket of the engine. Without it docker-modem reads DOCKER_HOST
   * (unix://, tcp://, ssh://, with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH) and
   * falls back to the local socket.
   */
  readonly socketPath?: string
  /** Longest a request may wait for the engine between bytes; a hung engine fails with EngineUnavailable. */
  readonly requestTimeoutMs?: number
}

const defaultRequestTimeoutMs = 30_000

// Failures of the connection itself, as opposed to answers of the engine.
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET", // also how docker-modem reports its request timeout ("socket hang up")
  "ENOENT",
  "EACCES",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

type ErrorClass = new (fields: ErrorFields) => unknown
type StatusErrors = { readonly [status: number]: ErrorClass }
type Instance<C> = C extends new (fields: ErrorFields) => infer E ? E : never
type Classified<M extends StatusErrors> = Instance<M[keyof M]> | EngineUnavailable | DockerEngineError

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/** Removes every occurrence of the given secrets (env values) from an engine message. */
const redact = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets
    .filter((secret) => secret.length > 0)
    .sort((a, b) => b.length - a.length)
    .reduce((acc, secret) => acc.split(secret).join("[redacted]"), text)

/**
 * The one place dockerode failures become our errors: `statuses` names the
 * error for the HTTP answers that mean something to the operation (404, 304,
 * 409); connection failures are EngineUnavailable; anything else is
 * DockerEngineError.
 */
const classify =
  <M extends StatusErrors>(operation: string, statuses: M, secrets: ReadonlyArray<string> = []) =>
  (cause: unknown): Classified<M> => {
    const record = isRecord(cause) ? cause : {}
    const engineMessage = isRecord(record.json) ? record.json.message : undefined
    const message = typeof engineMessage === "string" ? engineMessage : record.message
    const detail = redact(typeof message === "string" ? message.trim() : String(cause), secrets)
    const statusCode = typeof record.statusCode === "number" ? record.statusCode : undefined
    if (statusCode !== undefined) {
      const specific = statuses[statusCode]
      if (specific !== undefined) return new specific({ operation, detail }) as Instance<M[keyof M]>
      return new DockerEngineError({ operation, detail, statusCode })
    }
    // ssh2 marks connection and authentication failures with `level`.
    const sshFailure = typeof record.level === "string" && record.level.startsWith("client-")
    if ((typeof record.code === "string" && unreachableCodes.has(record.code)) || sshFailure) {
      return new EngineUnavailable({ operation, detail })
    }
    return new DockerEngineError({ operation, detail })
  }

const call = <A, M extends StatusErrors>(
  operation: string,
  run: () => Promise<A>,
  statuses: M,
  secrets?: ReadonlyArray<string>
): Effect.Effect<A, Classified<M>> => Effect.tryPromise({ try: run, catch: classify(operation, statuses, secrets) })

/** Validates the part of an engine answer we use; a malformed answer is an engine error, not a crash. */
const decode =
  <A>(operation: string, schema: Schema.ConstraintDecoder<A>) =>
  (value: unknown): Effect.Effect<A, DockerEngineError> =>
    Schema.decodeUnknownEffect(schema)(value).pipe(
      Effect.mapError((error) => new DockerEngineError({ operation, detail: `unexpected answer: ${error.message}` }))
    )

const Status = Schema.Literals(["created", "running", "paused", "restarting", "removing", "exited", "dead"])
const Labels = Schema.NullOr(Schema.Record(Schema.String, Schema.String))
const PortMap = Schema.NullOr(
  Schema.Record(
    Schema.String,
    Schema.NullOr(Schema.Array(Schema.Struct({ HostIp: Schema.String, HostPort: Schema.String })))
  )
)

const VersionAnswer = Schema.Struct({ Version: Schema.String, ApiVersion: Schema.String })

const InspectAnswer = Schema.Struct({
  Id: Schema.String,
  Name: Schema.String,
  Config: Schema.Struct({ Image: Schema.String, User: Schema.String, Labels }),
  State: Schema.Struct({
    Status,
    Running: Schema.Boolean,
    ExitCode: Schema.Number,
    StartedAt: Schema.String,
    FinishedAt: Schema.String
  }),
  HostConfig: Schema.Struct({ PortBindings: PortMap }),
  NetworkSettings: Schema.Struct({ Ports: PortMap })
})

const ListAnswer = Schema.Array(
  Schema.Struct({ Id: Schema.String, Names: Schema.Array(Schema.String), State: Status, Labels, Image: Schema.String })
)

const ExecAnswer = Schema.Struct({ Running: Schema.Boolean, ExitCode: Schema.NullOr(Schema.Number) })

const PullEntry = Schema.Struct({
  status: Schema.optional(Schema.String),
  id: Schema.optional(Schema.String),
  progress: Schema.optional(Schema.String),
  error: Schema.optional(Schema.String),
  errorDetail: Schema.optional(Schema.Struct({ message: Schema.optional(Schema.String) }))
})

// Docker reports "0001-01-01T00:00:00Z" for a time that has not happened.
const engineDate = (text: string): Date | undefined => {
  const date = new Date(text)
  return Number.isNaN(date.getTime()) || date.getTime() <= 0 ? undefined : date
}

// Docker names carry a leading "/".
const containerName = (name: string): string => name.replace(/^\//, "")

/**
 * Refuses entries the engine would reject, because its rejection (at create,
 * or later at start) quotes the whole entry, value included.
 */
const envList = (operation: string, env: Readonly<Record<string, string>>) =>
  Effect.forEach(Object.entries(env), ([key, value]) =>
    key.length === 0 || /[=\0]/.test(key) || value.includes("\0")
      ? Effect.fail(new DockerEngineError({ operation, detail: `invalid environment variable ${JSON.stringify(key)}` }))
      : Effect.succeed(`${key}=${value}`)
  )

/** A sink keeping at most `limit` bytes; the rest is read and dropped so the writer never blocks. */
const cappedSink = (limit: number) => {
  const chunks: Array<Buffer> = []
  let size = 0
  let truncated = false
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const kept = chunk.subarray(0, Math.max(0, limit - size))
      if (kept.length < chunk.length) truncated = true
      chunks.push(kept)
      size += kept.length
      done()
    }
  })
  return { sink, text: () => Buffer.concat(chunks).toString("utf8"), truncated: () => truncated }
}

type Demux = (stream: Readable, stdout: Writable, stderr: Writable) => void

export const make = (options: Options = {}): Effect.Effect<Docker["Service"], EngineUnavailable> =>
  Effect.gen(function* () {
    const requestTimeoutMs = options.requestTimeoutMs ?? defaultRequestTimeoutMs
    // Dockerode clients hold no connection, so a client per timeout is cheap.
    const client = (operation: string, timeout: number) =>
      Effect.try({
        try: () =>
          options.socketPath === undefined
            ? new Dockerode({ timeout })
            : // An empty host and plain http keep a DOCKER_HOST from the environment from overriding the socket.
              new Dockerode({ socketPath: options.socketPath, host: "", protocol: "http", timeout }),
        catch: (cause) => new EngineUnavailable({ operation, detail: String(cause) })
      })
    const api = yield* client("engine.connect", requestTimeoutMs)
    const demux: Demux = api.modem.demuxStream.bind(api.modem)

    const inspectExec = (exec: Dockerode.Exec, secrets: ReadonlyArray<string>) =>
      call("container.exec", () => exec.inspect(), {}, secrets).pipe(
        Effect.flatMap(decode("container.exec", ExecAnswer))
      )

    /** Runs a created exec to its end, collecting output; interruption closes the stream. */
    const runExec = (exec: Dockerode.Exec, maxOutputBytes: number, secrets: ReadonlyArray<string>) =>
      Effect.callback<
        { readonly stdout: string; readonly stderr: string; readonly truncated: boolean },
        ContainerNotFound | EngineUnavailable | DockerEngineError
      >((resume) => {
        const stdout = cappedSink(maxOutputBytes)
        const stderr = cappedSink(maxOutputBytes)
        let stream: Readable | undefined
        let interrupted = false
        let ended = false
        exec.start({ hijack: true, stdin: false }).then(
          (duplex) => {
            if (interrupted) {
              duplex.destroy()
              return
            }
            stream = duplex
            demux(duplex, stdout.sink, stderr.sink)
            duplex.on("end", () => {
              ended = true
              resume(
                Effect.succeed({
                  stdout: stdout.text(),
                  stderr: stderr.text(),
                  truncated: stdout.truncated() || stderr.truncated()
                })
              )
            })
            duplex.on("error", (cause) =>
              resume(Effect.fail(classify("container.exec", { 404: ContainerNotFound }, secrets)(cause)))
            )
            duplex.on("close", () => {
              if (!ended) {
                resume(
                  Effect.fail(
                    new EngineUnavailable({
                      operation: "container.exec",
                      detail: "output stream closed before the end"
                    })
                  )
                )
              }
            })
          },
          (cause) => resume(Effect.fail(classify("container.exec", { 404: ContainerNotFound }, secrets)(cause)))
        )
        return Effect.sync(() => {
          interrupted = true
          stream?.destroy()
        })
      })

    /** Reads a pull's JSON progress stream; an `error` entry fails the pull even though the HTTP answer was 200. */
    const followPull = (ref: string, response: Readable, onProgress: (line: string) => void) =>
      Effect.callback<void, ImagePullFailed | EngineUnavailable>((resume) => {
        const operation = "image.pull"
        let pending = ""
        let failure: string | undefined
        const handle = (line: string) => {
          let json: unknown
          try {
            json = JSON.parse(line)
          } catch {
            failure ??= `malformed progress entry for ${ref}`
            return
          }
          const entry = Schema.decodeUnknownOption(PullEntry)(json)
          if (entry._tag === "None") {
            failure ??= `malformed progress entry for ${ref}`
            return
          }
          const { status, id, progress, error, errorDetail } = entry.value
          if (error !== undefined || errorDetail?.message !== undefined) {
            failure ??= error ?? errorDetail?.message
            return
          }
          if (status !== undefined) onProgress([id, status, progress].filter((part) => part).join(" "))
        }
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          const lines = (pending + chunk).split("\n")
          pending = lines.pop() ?? ""
          for (const line of lines) if (line.trim().length > 0) handle(line.trim())
        })
        response.on("end", () => {
          if (pending.trim().length > 0) handle(pending.trim())
          resume(failure === undefined ? Effect.void : Effect.fail(new ImagePullFailed({ operation, detail: failure })))
        })
        response.on("error", (cause) =>
          resume(Effect.fail(new EngineUnavailable({ operation, detail: String(cause) })))
        )
        response.on("close", () => {
          if (!response.readableEnded) {
            resume(Effect.fail(new ImagePullFailed({ operation, detail: `progress stream of ${ref} ended early` })))
          }
        })
        return Effect.sync(() => response.destroy())
      })

    const toInfo = (answer: typeof InspectAnswer.Type): ContainerInfo => {
      // The published port is the one we asked to bind; report its 127.0.0.1 binding only.
      const requested = Object.keys(answer.HostConfig.PortBindings ?? {})
      const binding = requested
        .flatMap((port) => answer.NetworkSettings.Ports?.[port] ?? [])
        .find((candidate) => candidate.HostIp === "127.0.0.1")
      return {
        id: answer.Id,
        name: containerName(answer.Name),
        image: answer.Config.Image,
        state: {
          status: answer.State.Status,
          running: answer.State.Running,
          exitCode: answer.State.ExitCode,
          startedAt: engineDate(answer.State.StartedAt),
          finishedAt: engineDate(answer.State.FinishedAt)
        },
        labels: answer.Config.Labels ?? {},
        hostPort: binding === undefined ? undefined : Number(binding.HostPort),
        user: answer.Config.User
      }
    }

    return Docker.of({
      ping: Effect.fn("Docker.ping")(function* () {
        yield* call("engine.ping", () => api.ping(), {})
      }),

      version: Effect.fn("Docker.version")(function* () {
        const answer = yield* call("engine.version", () => api.version(), {}).pipe(
          Effect.flatMap(decode("engine.version", VersionAnswer))
        )
        return { version: answer.Version, apiVersion: answer.ApiVersion }
      }),

      imageExists: Effect.fn("Docker.imageExists")(function* (ref) {
        return yield* call("image.inspect", () => api.getImage(ref).inspect(), { 404: ImageNotFound }).pipe(
          Effect.as(true),
          Effect.catchTag("ImageNotFound", () => Effect.succeed(false))
        )
      }),

      pullImage: Effect.fn("Docker.pullImage")(function* (ref, onProgress) {
        const response = yield* call("image.pull", () => api.pull(ref), {}).pipe(
          // Every refusal of a pull (unknown repository, no registry, denied) is the pull failing.
          Effect.catchTag("DockerEngineError", (error) =>
            Effect.fail(new ImagePullFailed({ operation: error.operation, detail: error.detail }))
          )
        )
        if (!(response instanceof Readable)) {
          return yield* new ImagePullFailed({ operation: "image.pull", detail: "the engine sent no progress stream" })
        }
        yield* followPull(ref, response, onProgress)
      }),

      createContainer: Effect.fn("Docker.createContainer")(function* (spec) {
        const port = `${spec.exposedPort}/tcp`
        const env = yield* envList("container.create", spec.env)
        const container = yield* call(
          "container.create",
          () =>
            api.createContainer({
              name: spec.name,
              Image: spec.image,
              Cmd: spec.cmd === undefined ? undefined : [...spec.cmd],
              Env: env,
              Labels: { ...spec.labels },
              User: spec.user,
              WorkingDir: spec.workingDir,
              ExposedPorts: { [port]: {} },
              HostConfig: {
                // Never on all interfaces: the port serves a password-protected IDE to this machine only.
                PortBindings: {
                  [port]: [{ HostIp: "127.0.0.1", HostPort: spec.hostPort === undefined ? "" : String(spec.hostPort) }]
                },
                // Mounts rather than Binds: a missing host path fails instead of being created as root.
                Mounts: spec.binds.map((bind) => ({
                  Type: "bind" as const,
                  Source: bind.hostPath,
                  Target: bind.containerPath,
                  ReadOnly: bind.readOnly
                })),
                NanoCpus: spec.cpus === undefined ? undefined : Math.round(spec.cpus * 1e9),
                Memory: spec.memoryBytes,
                PidsLimit: spec.pidsLimit,
                Init: spec.init
              }
            }),
          { 404: ImageNotFound, 409: NameConflict },
          Object.values(spec.env)
        )
        return { id: container.id }
      }),

      start: Effect.fn("Docker.start")(function* (id) {
        yield* call("container.start", () => api.getContainer(id).start(), {
          404: ContainerNotFound,
          304: ContainerAlreadyStarted
        })
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
        const filters = Object.entries(labels).map(([key, value]) => (value === undefined ? key : `${key}=${value}`))
        const answer = yield* call(
          "container.list",
          () => api.listContainers({ all, filters: JSON.stringify({ label: filters }) }),
          {}
        ).pipe(
          Effect.flatMap(decode("container.list", ListAnswer)),
          // Whatever went wrong, the caller must not mistake it for "no containers".
          Effect.mapError((error) => new EnumerationError({ operation: "container.list", detail: error.message }))
        )
        return answer.map(
          (container): ContainerSummary => ({
            id: container.Id,
            name: containerName(container.Names[0] ?? ""),
            state: container.State,
            labels: container.Labels ?? {},
            image: container.Image
          })
        )
      }),

      exec: Effect.fn("Docker.exec")(function* (id, options) {
        const secrets = Object.values(options.env ?? {})
        const env = yield* envList("container.exec", options.env ?? {})
        const exec = yield* call(
          "container.exec",
          () =>
            api.getContainer(id).exec({
              Cmd: [...options.argv],
              AttachStdin: false,
              AttachStdout: true,
              AttachStderr: true,
              Tty: false,
              Env: env,
              User: options.user,
              WorkingDir: options.cwd
            }),
          { 404: ContainerNotFound },
          secrets
        )
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
        // The output can close a moment before the engine records the exit code.
        const state = yield* inspectExec(exec, secrets).pipe(
          Effect.repeat({ schedule: Schedule.spaced(20), until: (answer) => !answer.Running, times: 100 })
        )
        if (state.ExitCode === null) {
          return yield* new DockerEngineError({ operation: "container.exec", detail: "the exec has no exit code" })
        }
        const result: ExecResult = { exitCode: state.ExitCode, ...output }
        return result
      }),

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
        demux(source, output.sink, output.sink)
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
