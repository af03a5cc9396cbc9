import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, layer } from "@effect/vitest"
import { Context, Deferred, Effect, Exit, Layer, Schedule } from "effect"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { Docker, NodeDocker, SshTransport } from "../src/index.ts"
import { healthzSpec, healthzTag, httpGet, scopedContainer } from "./fixtures.ts"
import { type RemoteEngine, remoteEngineWith, startTcpRelay } from "./RemoteEngine.ts"

class Remote extends Context.Service<Remote, RemoteEngine>()("prbox/docker/test/Remote") {}

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-ssh-test-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/** A known_hosts file holding `lines`. */
const knownHosts = (...lines: ReadonlyArray<string>) =>
  Effect.map(tempDir, (dir) => {
    const file = join(dir, "known_hosts")
    writeFileSync(file, lines.map((line) => `${line}\n`).join(""))
    return file
  })

/** A transport to `remote` (or to another port that leads to it), and the Docker client over it. */
const overSsh = (remote: RemoteEngine, overrides: Partial<SshTransport.SshTransportOptions> = {}) =>
  Effect.gen(function* () {
    const ssh = yield* SshTransport.make({
      address: remote.address,
      knownHostsFile: remote.knownHostsFile,
      identityFile: remote.identityFile,
      ...overrides
    })
    const docker = yield* NodeDocker.make({ ssh })
    return { ssh, docker }
  })

/** The same, through a relay the test can cut (known_hosts names the relay's port). */
const throughRelay = (remote: RemoteEngine) =>
  Effect.gen(function* () {
    const relay = yield* startTcpRelay(remote.port)
    const knownHostsFile = yield* knownHosts(`[127.0.0.1]:${relay.port} ${remote.hostKey}`)
    const over = yield* overSsh(remote, { address: `ssh://${remote.user}@127.0.0.1:${relay.port}`, knownHostsFile })
    return { relay, ...over }
  })

const localContainersOfRun = (): Array<string> =>
  execFileSync(
    "docker",
    ["ps", "-a", "-q", "--no-trunc", "--filter", `label=${TEST_RUN_LABEL}=${inject("testRunId")}`],
    {
      encoding: "utf8"
    }
  )
    .split("\n")
    .filter((line) => line.length > 0)

const remoteLayer = Layer.effect(Remote, remoteEngineWith(healthzTag))

// Real time: the remote engine's start and the SSH handshakes run on real clocks.
layer(remoteLayer, { excludeTestServices: true, timeout: 180_000 })("Docker over SSH to a real remote engine", (it) => {
  it.effect("pings and versions the remote engine through NodeDocker.make({ address })", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const docker = yield* NodeDocker.make({
        address: remote.address,
        knownHostsFile: remote.knownHostsFile,
        identityFile: remote.identityFile
      })
      yield* docker.ping()
      const { version, apiVersion } = yield* docker.version()
      assert.match(version, /^\d+\.\d+/)
      assert.match(apiVersion, /^1\.\d+$/)
    })
  )

  it.effect("a container made on the remote engine lives there, not on the local engine", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const { docker } = yield* overSsh(remote)
      const { id } = yield* scopedContainer(healthzSpec()).pipe(Effect.provideService(Docker, docker))
      yield* docker.start(id)
      const listed = yield* docker.listByLabel({ [TEST_RUN_LABEL]: inject("testRunId") }, { all: true })
      assert.include(
        listed.map((summary) => summary.id),
        id
      )
      assert.isTrue((yield* docker.inspect(id)).state.running)
      assert.notInclude(localContainersOfRun(), id)
    })
  )

  it.effect(
    "concurrent requests share one SSH connection and at most maxChannels channels, kept between requests",
    () =>
      Effect.gen(function* () {
        const remote = yield* Remote
        const { ssh, docker } = yield* overSsh(remote, { maxChannels: 4 })
        yield* Effect.all(
          Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? docker.ping() : docker.version())),
          { concurrency: "unbounded" }
        )
        const stats = ssh.stats()
        assert.strictEqual(stats.connections, 1)
        assert.isAtMost(stats.peakChannels, 4)
        // The bound was reached: the requests did run side by side.
        assert.strictEqual(stats.peakChannels, 4)
        // Kept alive: more requests open no more channels.
        yield* Effect.all([docker.ping(), docker.ping()], { concurrency: "unbounded" })
        assert.strictEqual(ssh.stats().openedChannels, stats.openedChannels)
        assert.strictEqual(ssh.stats().connections, 1)
      })
  )

  it.effect("a channel an exec's stream holds does not starve the requests waiting for one", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const { ssh, docker } = yield* overSsh(remote, { maxChannels: 2 })
      const { id } = yield* scopedContainer(healthzSpec()).pipe(Effect.provideService(Docker, docker))
      yield* docker.start(id)
      const streaming = yield* Deferred.make<void>()
      // Holds one of the two channels for as long as the test runs.
      yield* docker
        .execStreamed(id, { argv: ["sh", "-c", "echo started; sleep 120"] }, () => {
          Deferred.doneUnsafe(streaming, Exit.void)
        })
        .pipe(Effect.forkScoped)
      yield* Deferred.await(streaming)
      // Two requests, one channel left: the second waits for the first's, which must not idle.
      yield* Effect.all([docker.ping(), docker.version()], { concurrency: "unbounded" }).pipe(
        Effect.timeoutOrElse({
          duration: "20 seconds",
          orElse: () => Effect.die(new Error("a request waited for the exec's channel"))
        })
      )
      assert.isAtMost(ssh.stats().peakChannels, 2)
    })
  )

  it.effect("reconnects on the next request after the connection was cut", () =>
    Effect.gen(function* () {
      const { relay, ssh, docker } = yield* throughRelay(yield* Remote)
      yield* docker.ping()
      yield* docker.ping()
      assert.strictEqual(relay.accepted(), 1)
      relay.cut()
      yield* ssh.disconnected()
      yield* docker.version()
      assert.strictEqual(relay.accepted(), 2)
      assert.strictEqual(ssh.stats().connections, 2)
    })
  )

  it.effect("a hashed known_hosts entry (ssh-keygen -H) is trusted", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const file = yield* knownHosts(`[127.0.0.1]:${remote.port} ${remote.hostKey}`)
      execFileSync("ssh-keygen", ["-H", "-f", file], { stdio: "ignore" })
      const { docker } = yield* overSsh(remote, { knownHostsFile: file })
      yield* docker.ping()
    })
  )

  it.effect("refuses a host that is not in known_hosts, saying how to add it and its fingerprint", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const file = yield* knownHosts(`127.0.0.1 ${remote.hostKey}`, `[127.0.0.1]:1 ${remote.hostKey}`)
      const { docker } = yield* overSsh(remote, { knownHostsFile: file })
      const error = yield* Effect.flip(docker.ping())
      assert.strictEqual(error._tag, "EngineHostUntrusted")
      assert.include(error.message, `[127.0.0.1]:${remote.port} is not in ${file}`)
      assert.include(error.message, `ssh-keyscan -p ${remote.port} 127.0.0.1 >> ${file}`)
      const fingerprint = execFileSync("ssh-keygen", ["-lf", "-"], { input: remote.hostKey, encoding: "utf8" })
      assert.include(error.message, fingerprint.split(" ")[1] ?? "no fingerprint")
    })
  )

  it.effect("refuses a host whose key changed", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const file = yield* knownHosts(`[127.0.0.1]:${remote.port} ${remote.otherHostKey}`)
      const { docker } = yield* overSsh(remote, { knownHostsFile: file })
      const error = yield* Effect.flip(docker.version())
      assert.strictEqual(error._tag, "EngineHostUntrusted")
      assert.include(error.message, "has CHANGED")
      assert.include(error.message, `ssh-keygen -R '[127.0.0.1]:${remote.port}'`)
    })
  )

  it.effect("a wrong user, or a key the server does not accept, is EngineAuthFailed", () =>
    Effect.gen(function* () {
      const remote = yield* Remote
      const wrongUser = yield* overSsh(remote, { address: `ssh://nobody-here@127.0.0.1:${remote.port}` })
      const refused = yield* Effect.flip(wrongUser.docker.ping())
      assert.strictEqual(refused._tag, "EngineAuthFailed")
      assert.include(refused.message, remote.identityFile)
      assert.notInclude(refused.message, "PRIVATE KEY")

      const dir = yield* tempDir
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", join(dir, "stranger")])
      const wrongKey = yield* overSsh(remote, { identityFile: join(dir, "stranger") })
      assert.strictEqual((yield* Effect.flip(wrongKey.docker.ping()))._tag, "EngineAuthFailed")
    })
  )

  it.effect("forwardPort reaches a server on the remote engine's 127.0.0.1 from this machine's, across a cut", () =>
    Effect.gen(function* () {
      const { relay, ssh, docker } = yield* throughRelay(yield* Remote)
      // Published on the remote host's 127.0.0.1 only: nothing here listens on that port.
      const { id } = yield* scopedContainer(healthzSpec()).pipe(Effect.provideService(Docker, docker))
      yield* docker.start(id)
      const remotePort = (yield* docker.inspect(id)).hostPort
      if (remotePort === undefined) return assert.fail("the remote container has no published port")
      const forward = yield* ssh.forwardPort({ remoteHost: "127.0.0.1", remotePort })
      assert.notStrictEqual(forward.localPort, remotePort)
      const healthz = httpGet(forward.localPort, "/healthz").pipe(
        Effect.tap((response) => Effect.tryPromise(() => response.text())),
        Effect.map((response) => response.status)
      )
      // The server in the container starts in milliseconds, but not before `start` returns.
      assert.strictEqual(yield* healthz.pipe(Effect.retry({ times: 40, schedule: Schedule.spaced(250) })), 200)
      relay.cut()
      yield* ssh.disconnected()
      assert.strictEqual(yield* healthz, 200)
      assert.strictEqual(ssh.stats().connections, 2)
    })
  )
})
