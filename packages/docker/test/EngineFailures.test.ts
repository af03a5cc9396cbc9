import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { Docker, NodeDocker } from "../src/index.ts"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-docker-test-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** An HTTP server on a Unix socket standing in for the engine, to produce answers a real one rarely gives. */
const fakeEngine = (handle: (request: IncomingMessage, response: ServerResponse) => void) =>
  Effect.gen(function* () {
    const socketPath = join(yield* tempDir, "docker.sock")
    const server = createServer(handle)
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => {
        server.listen(socketPath, () => resume(Effect.void))
      }),
      () =>
        Effect.callback<void>((resume) => {
          server.closeAllConnections()
          server.close(() => resume(Effect.void))
        })
    )
    return socketPath
  })

const withEngine =
  (options: NodeDocker.Options) =>
  <A, E>(use: (docker: Docker["Service"]) => Effect.Effect<A, E>) =>
    Effect.service(Docker).pipe(Effect.flatMap(use), Effect.provide(NodeDocker.layer(options)))

const withEnv = (name: string, value: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const previous = process.env[name]
      process.env[name] = value
      return previous
    }),
    (previous) =>
      Effect.sync(() => {
        if (previous === undefined) delete process.env[name]
        else process.env[name] = previous
      })
  )

it.live("a missing engine socket is EngineUnavailable, and listing fails instead of finding nothing", () =>
  Effect.gen(function* () {
    const socketPath = join(yield* tempDir, "nothing-here.sock")
    const [ping, inspect, list] = yield* withEngine({ socketPath })((docker) =>
      Effect.all([
        Effect.flip(docker.ping()),
        Effect.flip(docker.inspect("some-container")),
        Effect.flip(docker.listByLabel({ "dev.prbox.sandbox": undefined }, { all: true }))
      ])
    )
    assert.deepStrictEqual(
      [ping._tag, ping.operation, inspect._tag, list._tag],
      ["EngineUnavailable", "engine.ping", "EngineUnavailable", "EnumerationError"]
    )
    assert.include(ping.detail, "ENOENT")
    assert.include(list.detail, "ENOENT")
  })
)

it.live("follows DOCKER_HOST when no socket is given", () =>
  Effect.gen(function* () {
    const socketPath = join(yield* tempDir, "from-env.sock")
    yield* withEnv("DOCKER_HOST", `unix://${socketPath}`)
    const ping = yield* withEngine({})((docker) => Effect.flip(docker.ping()))
    assert.strictEqual(ping._tag, "EngineUnavailable")
    assert.include(ping.detail, socketPath)
  })
)

it.live("a malformed DOCKER_HOST fails building the layer", () =>
  Effect.gen(function* () {
    yield* withEnv("DOCKER_HOST", "tcp://[not-a-host")
    const failure = yield* Effect.flip(withEngine({})((docker) => docker.ping()))
    assert.strictEqual(failure._tag, "EngineUnavailable")
    assert.strictEqual(failure.operation, "engine.connect")
  })
)

it.live("an engine that never answers is EngineUnavailable after the request timeout", () =>
  Effect.gen(function* () {
    const socketPath = yield* fakeEngine(() => {})
    const [ping, list] = yield* withEngine({ socketPath, requestTimeoutMs: 200 })((docker) =>
      Effect.all([Effect.flip(docker.ping()), Effect.flip(docker.listByLabel({}, { all: true }))])
    )
    assert.deepStrictEqual([ping._tag, list._tag], ["EngineUnavailable", "EnumerationError"])
  })
)

it.live("a malformed or failed container list is an EnumerationError", () =>
  Effect.gen(function* () {
    let answer = { status: 200, body: '[{"Id":1}]' }
    const socketPath = yield* fakeEngine((_, response) => {
      response.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
    })
    const malformed = yield* withEngine({ socketPath })((docker) =>
      Effect.flip(docker.listByLabel({ "dev.prbox.sandbox": undefined }, { all: true }))
    )
    answer = { status: 500, body: '{"message":"disk on fire"}' }
    const failed = yield* withEngine({ socketPath })((docker) =>
      Effect.flip(docker.listByLabel({ "dev.prbox.sandbox": undefined }, { all: true }))
    )
    assert.deepStrictEqual([malformed._tag, failed._tag], ["EnumerationError", "EnumerationError"])
    assert.include(failed.detail, "disk on fire")
  })
)

it.live("an error entry in a pull's progress stream fails the pull although the answer was 200", () =>
  Effect.gen(function* () {
    const socketPath = yield* fakeEngine((_, response) => {
      response.writeHead(200, { "content-type": "application/json" })
      response.write('{"status":"Pulling from library/x","id":"latest"}\n{"status":"Downloading","id":"abc",')
      response.end(
        '"progress":"[=>  ] 1kB/2kB"}\n{"errorDetail":{"message":"unexpected EOF"},"error":"unexpected EOF"}\n'
      )
    })
    const lines: Array<string> = []
    const failure = yield* withEngine({ socketPath })((docker) =>
      Effect.flip(docker.pullImage("x:latest", (line) => lines.push(line)))
    )
    assert.deepStrictEqual([failure._tag, failure.detail], ["ImagePullFailed", "unexpected EOF"])
    assert.deepStrictEqual(lines, ["latest Pulling from library/x", "abc Downloading [=>  ] 1kB/2kB"])
  })
)

it.live("a pull whose stream completes cleanly succeeds", () =>
  Effect.gen(function* () {
    const socketPath = yield* fakeEngine((_, response) => {
      response.writeHead(200, { "content-type": "application/json" }).end('{"status":"Status: Image is up to date"}\n')
    })
    const lines: Array<string> = []
    yield* withEngine({ socketPath })((docker) => docker.pullImage("x:latest", (line) => lines.push(line)))
    assert.deepStrictEqual(lines, ["Status: Image is up to date"])
  })
)

it.live("env values quoted in an engine's refusal are redacted", () =>
  Effect.gen(function* () {
    const secret = "correct-horse-battery-staple"
    const socketPath = yield* fakeEngine((_, response) => {
      response
        .writeHead(400, { "content-type": "application/json" })
        .end(JSON.stringify({ message: `invalid environment variable: PASSWORD=${secret}` }))
    })
    const failure = yield* withEngine({ socketPath })((docker) =>
      Effect.flip(
        docker.createContainer({
          name: "x",
          image: "x",
          env: { PASSWORD: secret },
          labels: {},
          binds: [],
          exposedPort: 8080
        })
      )
    )
    assert.strictEqual(failure._tag, "DockerEngineError")
    assert.strictEqual(failure.detail, "invalid environment variable: PASSWORD=[redacted]")
    assert.notInclude(failure.message, secret)
  })
)
