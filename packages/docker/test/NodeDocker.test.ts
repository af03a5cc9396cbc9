import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { assert, layer } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { Docker, NodeDocker } from "../src/index.ts"
import {
  freePort,
  healthzSpec,
  healthzTag,
  httpGet,
  listening,
  runningHealthz,
  scopedContainer,
  uniqueName
} from "./fixtures.ts"

const missingId = "0".repeat(64)
const fakePassword = `fake-password-${randomBytes(6).toString("hex")}`

// Real time: exec deadlines and polling must not run on the TestClock.
layer(NodeDocker.layer(), { excludeTestServices: true })("NodeDocker against the local engine", (it) => {
  it.effect("finds the engine and the healthz test image", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      yield* docker.ping()
      const { apiVersion } = yield* docker.version()
      assert.match(apiVersion, /^1\.\d+$/)
      assert.isTrue(
        yield* docker.imageExists(healthzTag),
        `missing ${healthzTag}: run scripts/setup --with-test-images`
      )
      assert.isFalse(yield* docker.imageExists(`prbox-test/missing:${randomBytes(4).toString("hex")}`))
    })
  )

  it.effect("creates, starts, inspects, execs in, stops and removes a container", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const name = uniqueName("lifecycle")
      const { id } = yield* scopedContainer(
        healthzSpec({ name, user: "1234:2345", env: { PASSWORD: fakePassword }, labels: { "dev.prbox.pr": "7" } })
      )

      const created = yield* docker.inspect(id)
      assert.strictEqual(created.id, id)
      assert.strictEqual(created.name, name)
      assert.strictEqual(created.image, healthzTag)
      assert.strictEqual(created.user, "1234:2345")
      assert.strictEqual(created.state.status, "created")
      assert.isFalse(created.state.running)
      assert.isUndefined(created.state.startedAt)
      assert.strictEqual(created.labels["dev.prbox.pr"], "7")
      assert.strictEqual(created.labels[TEST_RUN_LABEL], inject("testRunId"))

      yield* docker.start(id)
      const running = yield* docker.inspect(id)
      assert.strictEqual(running.state.status, "running")
      assert.isTrue(running.state.running)
      assert.instanceOf(running.state.startedAt, Date)
      assert.isNumber(running.hostPort)

      const whoami = yield* docker.exec(id, { argv: ["id", "-u"], timeoutMs: 10_000, maxOutputBytes: 1024 })
      assert.deepStrictEqual(whoami, { exitCode: 0, stdout: "1234\n", stderr: "", truncated: false })

      yield* docker.stop(id, { timeoutSeconds: 10 })
      const stopped = yield* docker.inspect(id)
      assert.strictEqual(stopped.state.status, "exited")
      // 0 rather than 137: the image handled SIGTERM instead of waiting for the SIGKILL.
      assert.strictEqual(stopped.state.exitCode, 0)
      assert.instanceOf(stopped.state.finishedAt, Date)
      assert.isUndefined(stopped.hostPort)

      yield* docker.remove(id, { force: false, volumes: true })
      const gone = yield* Effect.flip(docker.inspect(id))
      assert.strictEqual(gone._tag, "ContainerNotFound")
    })
  )

  it.effect("reports a second start or stop as AlreadyStarted / AlreadyStopped (304)", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz()
      const again = yield* Effect.flip(docker.start(id))
      assert.strictEqual(again._tag, "ContainerAlreadyStarted")
      assert.strictEqual(again.operation, "container.start")
      yield* docker.stop(id, { timeoutSeconds: 10 })
      const twice = yield* Effect.flip(docker.stop(id, { timeoutSeconds: 10 }))
      assert.strictEqual(twice._tag, "ContainerAlreadyStopped")
      assert.strictEqual(twice.operation, "container.stop")
    })
  )

  it.effect("reports an unknown container as ContainerNotFound (404)", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const failures = [
        yield* Effect.flip(docker.inspect(missingId)),
        yield* Effect.flip(docker.start(missingId)),
        yield* Effect.flip(docker.stop(missingId, { timeoutSeconds: 1 })),
        yield* Effect.flip(docker.remove(missingId, { force: true, volumes: true })),
        yield* Effect.flip(docker.exec(missingId, { argv: ["true"], timeoutMs: 1000, maxOutputBytes: 10 })),
        yield* Effect.flip(docker.logs(missingId, {}))
      ]
      assert.deepStrictEqual(
        failures.map((failure) => failure._tag),
        Array(6).fill("ContainerNotFound")
      )
      assert.deepStrictEqual(
        failures.map((failure) => failure.operation),
        [
          "container.inspect",
          "container.start",
          "container.stop",
          "container.remove",
          "container.exec",
          "container.logs"
        ]
      )
    })
  )

  it.effect("reports a taken name as NameConflict (409) and a missing image as ImageNotFound", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const spec = healthzSpec()
      yield* scopedContainer(spec)
      const conflict = yield* Effect.flip(scopedContainer(spec))
      assert.strictEqual(conflict._tag, "NameConflict")
      const missing = yield* Effect.flip(
        scopedContainer(healthzSpec({ image: `prbox-test/missing:${randomBytes(4).toString("hex")}` }))
      )
      assert.strictEqual(missing._tag, "ImageNotFound")
      const listed = yield* docker.listByLabel({ [TEST_RUN_LABEL]: inject("testRunId") }, { all: true })
      assert.strictEqual(listed.filter((container) => container.name === spec.name).length, 1)
    })
  )

  it.effect("execs with exit codes, separate stdout and stderr, env, user and cwd", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz({ user: "1000:1000" })
      const result = yield* docker.exec(id, {
        argv: ["sh", "-c", 'echo "out $GREETING"; echo "err $(pwd)" >&2; id -u; exit 3'],
        env: { GREETING: "hello" },
        cwd: "/tmp",
        user: "4321",
        timeoutMs: 10_000,
        maxOutputBytes: 1024
      })
      assert.deepStrictEqual(result, {
        exitCode: 3,
        stdout: "out hello\n4321\n",
        stderr: "err /tmp\n",
        truncated: false
      })
    })
  )

  it.effect("answers whether a path exists in a created, never started container", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* scopedContainer(healthzSpec())
      assert.isTrue(yield* docker.hasPath(id, "/srv/prbox/entrypoint.sh"))
      assert.isTrue(yield* docker.hasPath(id, "/srv/prbox"))
      assert.isFalse(yield* docker.hasPath(id, "/srv/prbox/absent"))
      // The engine's 404 is the same for both: a missing container is not a missing path.
      const gone = yield* Effect.flip(docker.hasPath(missingId, "/srv/prbox"))
      assert.strictEqual(gone._tag, "ContainerNotFound")
    })
  )

  it.effect("runs the entrypoint it was created with instead of the image's", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz({
        entrypoint: ["/bin/sh", "-c", "echo from-entrypoint > /tmp/marker && exec /bin/sh /srv/prbox/entrypoint.sh"]
      })
      const marker = yield* docker.exec(id, { argv: ["cat", "/tmp/marker"], timeoutMs: 10_000, maxOutputBytes: 1024 })
      assert.strictEqual(marker.stdout, "from-entrypoint\n")
    })
  )

  it.effect("caps exec output and marks it truncated", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz()
      const result = yield* docker.exec(id, {
        argv: ["sh", "-c", "yes | head -c 200000; echo short >&2"],
        timeoutMs: 10_000,
        maxOutputBytes: 1000
      })
      assert.strictEqual(result.exitCode, 0)
      assert.strictEqual(result.stdout, "y\n".repeat(500))
      assert.strictEqual(result.stderr, "short\n")
      assert.isTrue(result.truncated)
    })
  )

  it.effect("fails an exec that outlives its deadline with ExecTimeout", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz()
      const failure = yield* Effect.flip(
        docker.exec(id, { argv: ["sleep", "30"], timeoutMs: 300, maxOutputBytes: 1024 })
      )
      assert.strictEqual(failure._tag, "ExecTimeout")
      assert.strictEqual(failure._tag === "ExecTimeout" && failure.timeoutMs, 300)
    })
  )

  it.effect("publishes the port on 127.0.0.1 only, serving /healthz and the heartbeat", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id, port } = yield* runningHealthz()

      const raw = JSON.parse(execFileSync("docker", ["inspect", id], { encoding: "utf8" }))[0]
      assert.deepStrictEqual(raw.HostConfig.PortBindings, { "8080/tcp": [{ HostIp: "127.0.0.1", HostPort: "" }] })
      assert.deepStrictEqual(raw.NetworkSettings.Ports["8080/tcp"], [{ HostIp: "127.0.0.1", HostPort: String(port) }])

      const response = yield* httpGet(port, "/healthz")
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("content-type"), "application/json")
      const health = (yield* Effect.promise(() => response.json())) as { status: string; lastHeartbeat: number }
      assert.strictEqual(health.status, "alive")
      assert.isAbove(health.lastHeartbeat, Date.UTC(2020, 0, 1))

      yield* docker.exec(id, {
        argv: ["sh", "-c", "echo 1700000000123 > /tmp/prbox-heartbeat"],
        timeoutMs: 10_000,
        maxOutputBytes: 1024
      })
      const beats = yield* Effect.forEach(
        Array.from({ length: 20 }),
        () => httpGet(port, "/healthz").pipe(Effect.flatMap((r) => Effect.promise(() => r.json()))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        beats,
        Array.from({ length: 20 }, () => ({ status: "alive", lastHeartbeat: 1700000000123 }))
      )
    })
  )

  it.effect("honours an explicit host port", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const wanted = yield* freePort
      const { id, port } = yield* runningHealthz({ hostPort: wanted })
      assert.strictEqual(port, wanted)
      assert.strictEqual((yield* docker.inspect(id)).hostPort, wanted)
      assert.strictEqual((yield* httpGet(wanted, "/healthz")).status, 200)
    })
  )

  it.effect("fails a start whose host port is taken with PortInUse, by a process or by a container", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const held = yield* listening
      const byProcess = yield* scopedContainer(healthzSpec({ hostPort: held }))
      const process = yield* Effect.flip(docker.start(byProcess.id))
      assert.strictEqual(process._tag, "PortInUse")
      assert.include(process.detail, String(held))

      const { port } = yield* runningHealthz()
      const byContainer = yield* scopedContainer(healthzSpec({ hostPort: port }))
      const container = yield* Effect.flip(docker.start(byContainer.id))
      assert.strictEqual(container._tag, "PortInUse")
    })
  )

  it.effect("lists containers by label and excludes the others", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const key = `dev.prbox.test-list-${randomBytes(4).toString("hex")}`
      const a = yield* scopedContainer(healthzSpec({ labels: { [key]: "a" } }))
      const b = yield* scopedContainer(healthzSpec({ labels: { [key]: "b" } }))
      yield* scopedContainer(healthzSpec())
      yield* docker.start(a.id)

      const onlyA = yield* docker.listByLabel({ [key]: "a" }, { all: true })
      assert.deepStrictEqual(
        onlyA.map((container) => [container.id, container.state, container.labels[key], container.image]),
        [[a.id, "running", "a", healthzTag]]
      )
      const anyValue = yield* docker.listByLabel({ [key]: undefined }, { all: true })
      assert.sameMembers(
        anyValue.map((container) => container.id),
        [a.id, b.id]
      )
      const runningOnly = yield* docker.listByLabel({ [key]: undefined }, { all: false })
      assert.deepStrictEqual(
        runningOnly.map((container) => container.id),
        [a.id]
      )
      assert.deepStrictEqual(yield* docker.listByLabel({ [key]: "c" }, { all: true }), [])
    })
  )

  it.effect("publishes extra ports on 127.0.0.1 at ports Docker picks, and tells them apart from the main one", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      // 7000 sorts before 8080 in Docker's port maps: hostPort must still be 8080's.
      const { id, port } = yield* runningHealthz({ extraPorts: [7000, 9000] })

      const raw = JSON.parse(execFileSync("docker", ["inspect", id], { encoding: "utf8" }))[0]
      for (const extra of ["7000/tcp", "9000/tcp"]) {
        assert.deepStrictEqual(raw.HostConfig.PortBindings[extra], [{ HostIp: "127.0.0.1", HostPort: "" }])
      }
      const info = yield* docker.inspect(id)
      assert.deepStrictEqual(Object.keys(info.publishedPorts).map(Number), [7000, 8080, 9000])
      for (const [containerPort, hostPort] of Object.entries(info.publishedPorts)) {
        assert.deepStrictEqual(raw.NetworkSettings.Ports[`${containerPort}/tcp`], [
          { HostIp: "127.0.0.1", HostPort: String(hostPort) }
        ])
      }
      assert.strictEqual(info.hostPort, port)
      assert.strictEqual(info.publishedPorts[8080], port)
      assert.strictEqual((yield* httpGet(port, "/healthz")).status, 200)

      yield* docker.stop(id, { timeoutSeconds: 10 })
      assert.deepStrictEqual((yield* docker.inspect(id)).publishedPorts, {})
    })
  )

  it.effect("starts a detached exec and returns while it runs, with its env, user and cwd", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id } = yield* runningHealthz()
      yield* docker.execDetached(id, {
        argv: [
          "sh",
          "-c",
          'echo "$(id -u) $(pwd) $TOKEN" > /tmp/detached.tmp; mv /tmp/detached.tmp /tmp/detached; exec sleep 300'
        ],
        env: { TOKEN: fakePassword },
        user: "4321",
        cwd: "/tmp"
      })
      const written = yield* docker
        .exec(id, { argv: ["cat", "/tmp/detached"], timeoutMs: 10_000, maxOutputBytes: 1024 })
        .pipe(
          Effect.filterOrFail((result) => result.exitCode === 0),
          Effect.retry({ schedule: Schedule.spaced(25), times: 400 })
        )
      assert.strictEqual(written.stdout, `4321 /tmp ${fakePassword}\n`)
      // Still running after the call returned: nothing waited for it.
      const sleeping = yield* docker.exec(id, {
        argv: ["sh", "-c", 'ps | grep -q "[s]leep 300"'],
        timeoutMs: 10_000,
        maxOutputBytes: 1024
      })
      assert.strictEqual(sleeping.exitCode, 0)

      const gone = yield* Effect.flip(docker.execDetached(missingId, { argv: ["true"] }))
      assert.strictEqual(gone._tag, "ContainerNotFound")
    })
  )

  it.effect("never puts env values into error messages", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      // The engine would quote these entries, values included, when refusing them.
      const emptyName = yield* Effect.flip(scopedContainer(healthzSpec({ env: { "": fakePassword } })))
      const nulValue = yield* Effect.flip(scopedContainer(healthzSpec({ env: { PASSWORD: `${fakePassword}\0` } })))
      const running = yield* runningHealthz()
      const execEnv = yield* Effect.flip(
        docker.exec(running.id, { argv: ["true"], env: { "": fakePassword }, timeoutMs: 1000, maxOutputBytes: 10 })
      )
      assert.deepStrictEqual(
        [emptyName, nulValue, execEnv].map((failure) => [failure._tag, failure.detail]),
        [
          ["DockerEngineError", 'invalid environment variable ""'],
          ["DockerEngineError", 'invalid environment variable "PASSWORD"'],
          ["DockerEngineError", 'invalid environment variable ""']
        ]
      )

      const spec = healthzSpec({ env: { PASSWORD: fakePassword } })
      const { id } = yield* scopedContainer(spec)
      const conflict = yield* Effect.flip(scopedContainer(spec))
      const notRunning = yield* Effect.flip(
        docker.exec(id, { argv: ["true"], env: { TOKEN: fakePassword }, timeoutMs: 1000, maxOutputBytes: 10 })
      )
      const detachedNotRunning = yield* Effect.flip(
        docker.execDetached(id, { argv: ["true"], env: { TOKEN: fakePassword } })
      )
      const detachedEnv = yield* Effect.flip(
        docker.execDetached(running.id, { argv: ["true"], env: { "": fakePassword } })
      )
      assert.deepStrictEqual(
        [conflict._tag, notRunning._tag, detachedNotRunning._tag, detachedEnv._tag],
        ["NameConflict", "DockerEngineError", "DockerEngineError", "DockerEngineError"]
      )
      for (const failure of [emptyName, nulValue, execEnv, conflict, notRunning, detachedNotRunning, detachedEnv]) {
        assert.notInclude(failure.message, fakePassword)
        assert.notInclude(String(failure), fakePassword)
        assert.notInclude(JSON.stringify(failure), fakePassword)
      }
    })
  )

  it.effect("serves code-server's login: the right password gets a session cookie, a wrong one a 401", () =>
    Effect.gen(function* () {
      const { port } = yield* runningHealthz({ env: { PASSWORD: fakePassword } })
      const login = (password: string) =>
        httpGet(port, "/login", { method: "POST", body: new URLSearchParams({ password }) })

      const page = yield* httpGet(port, "/login")
      assert.strictEqual(page.status, 200)

      const anonymous = yield* httpGet(port, "/")
      assert.strictEqual(anonymous.status, 302)
      assert.strictEqual(anonymous.headers.get("location"), "./login")

      const wrong = yield* login("not-the-password")
      assert.strictEqual(wrong.status, 401)
      assert.isNull(wrong.headers.get("set-cookie"))

      const right = yield* login(fakePassword)
      assert.strictEqual(right.status, 302)
      assert.strictEqual(right.headers.get("location"), "./")
      const cookie = right.headers.get("set-cookie") ?? ""
      assert.match(cookie, /^code-server-session=[^;]+; Path=\/; HttpOnly$/)

      const session = cookie.split(";")[0] ?? ""
      const home = yield* httpGet(port, "/", { headers: { cookie: `other=1; ${session}` } })
      assert.strictEqual(home.status, 200)
      const forged = yield* httpGet(port, "/", { headers: { cookie: "code-server-session=forged" } })
      assert.strictEqual(forged.status, 302)
    })
  )

  it.effect("refuses every login when the container has no PASSWORD", () =>
    Effect.gen(function* () {
      const { port } = yield* runningHealthz()
      const response = yield* httpGet(port, "/login", { method: "POST", body: new URLSearchParams({ password: "" }) })
      assert.strictEqual(response.status, 401)
    })
  )

  it.effect("reads the container's logs, stdout and stderr together", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const { id, port } = yield* runningHealthz()
      yield* httpGet(port, "/nothing-here")
      // The engine's log copier lags the container by a moment.
      const logs = yield* docker.logs(id, {}).pipe(
        Effect.filterOrFail((text) => text.includes("GET /nothing-here")),
        Effect.retry({ schedule: Schedule.spaced(25), times: 200 })
      )
      assert.include(logs, "healthz: listening on 8080\n")
      assert.include(logs, "GET /healthz\n")
      assert.strictEqual(yield* docker.logs(id, { tail: 1 }), "GET /nothing-here\n")
      assert.strictEqual(yield* docker.logs(id, { since: new Date(Date.now() + 3_600_000) }), "")
    })
  )

  it.effect("follows a container's output to a line, or to its end when the container stops", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const since = new Date()
      const { id } = yield* runningHealthz()
      assert.isTrue(yield* docker.awaitLogLine(id, { since, matches: (line) => line === "healthz: listening on 8080" }))

      const exits = yield* scopedContainer(
        healthzSpec({ entrypoint: ["/bin/sh", "-c", "echo one; echo two >&2; exit 3"] })
      )
      const beforeStart = new Date()
      yield* docker.start(exits.id)
      assert.isFalse(yield* docker.awaitLogLine(exits.id, { since: beforeStart, matches: () => false }))
      assert.isTrue(yield* docker.awaitLogLine(exits.id, { since: beforeStart, matches: (line) => line === "two" }))
      // It ended: nothing was written after now.
      assert.isFalse(yield* docker.awaitLogLine(exits.id, { since: new Date(), matches: () => true }))
      const missing = yield* Effect.flip(docker.awaitLogLine(missingId, { since, matches: () => true }))
      assert.strictEqual(missing._tag, "ContainerNotFound")
    })
  )

  it.effect("fails a pull that cannot succeed with ImagePullFailed", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const failure = yield* Effect.flip(
        docker.pullImage(`prbox-test/never-published:${randomBytes(4).toString("hex")}`, () => {})
      )
      assert.strictEqual(failure._tag, "ImagePullFailed")
    })
  )
})
