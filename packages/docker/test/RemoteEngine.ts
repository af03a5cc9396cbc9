import { execFile, execFileSync, spawn, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import Dockerode, { type DockerOptions } from "dockerode"
import { Effect, Schedule, type Scope } from "effect"
import { inject } from "vitest"
import { imageTag } from "../../../scripts/images/images.ts"
import { remoteEngineImage } from "../../../scripts/images/remote-engine.ts"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { SshTransport } from "../src/index.ts"

/**
 * A second, real Docker engine that cannot see this machine's files:
 * dockerd in a container of the local engine (scripts/images/remote-engine),
 * reached only through its sshd, published on 127.0.0.1 at a random port,
 * with a host key and a user key made for this run.
 */

/** Built by `scripts/setup --with-test-images`; tests only compute its tag. */
export const remoteEngineTag = imageTag(remoteEngineImage)

export interface RemoteEngine {
  /** `ssh://prbox@127.0.0.1:<port>`. */
  readonly address: string
  readonly port: number
  readonly user: string
  /** Holds exactly the engine's host key, as `[127.0.0.1]:<port> ssh-ed25519 …`. */
  readonly knownHostsFile: string
  /** The user's private key (ed25519, no passphrase). */
  readonly identityFile: string
  /** The engine's host key line (`ssh-ed25519 AAAA…`) and another key, for the changed-key test. */
  readonly hostKey: string
  readonly otherHostKey: string
  /** The engine's container on the local engine. */
  readonly containerId: string
  /** A local image, saved here and loaded there through the Docker API over SSH (skipped when it is there). */
  readonly loadImage: (tag: string) => Effect.Effect<void>
  /** Stops the engine's container (the engine becomes unreachable); it is removed with the scope anyway. */
  readonly stop: () => Effect.Effect<void>
}

const run = (file: string, args: ReadonlyArray<string>): string =>
  execFileSync(file, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

const dockerAsync = (args: ReadonlyArray<string>) =>
  Effect.callback<string, Error>((resume) => {
    execFile("docker", args, { encoding: "utf8" }, (error, stdout, stderr) =>
      resume(error === null ? Effect.succeed(stdout.trim()) : Effect.fail(new Error(`${error.message}${stderr}`)))
    )
  })

/** The container's last lines, both streams (dockerd and sshd log to stderr). */
const containerLog = (id: string): string => {
  const logs = spawnSync("docker", ["logs", "--tail", "30", id], { encoding: "utf8" })
  return `${logs.stdout}${logs.stderr}`
}

/** Capabilities for an engine that cannot grant `--privileged` (its bounding set lacks one): what dockerd needs. */
const CAPABILITIES = [
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_ADMIN",
  "NET_BIND_SERVICE",
  "NET_RAW",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_ADMIN",
  "SYS_CHROOT",
  "SYS_PTRACE"
]
const UNPRIVILEGED = [
  ...CAPABILITIES.flatMap((cap) => ["--cap-add", cap]),
  ...["seccomp=unconfined", "apparmor=unconfined", "systempaths=unconfined"].flatMap((opt) => ["--security-opt", opt]),
  ...["--device-cgroup-rule", "a *:* rwm"]
]

/** Creates and starts the engine's container: privileged, or with the capabilities dockerd needs. */
const startContainer = (env: ReadonlyArray<string>): string => {
  const create = (mode: ReadonlyArray<string>) =>
    run("docker", [
      "create",
      "--name",
      `prbox-test-remote-engine-${randomBytes(4).toString("hex")}`,
      "--label",
      `${TEST_RUN_LABEL}=${inject("testRunId")}`,
      "--publish",
      "127.0.0.1::22",
      ...env.flatMap((entry) => ["--env", entry]),
      ...mode,
      remoteEngineTag
    ])
  const privileged = create(["--privileged"])
  try {
    run("docker", ["start", privileged])
    return privileged
  } catch (error) {
    run("docker", ["rm", "--force", "--volumes", privileged])
    if (!/apply caps/.test(String((error as { stderr?: unknown }).stderr ?? error))) throw error
  }
  const unprivileged = create(UNPRIVILEGED)
  try {
    run("docker", ["start", unprivileged])
  } catch (error) {
    run("docker", ["rm", "--force", "--volumes", unprivileged])
    throw error
  }
  return unprivileged
}

const keyPair = (dir: string, name: string): { readonly path: string; readonly publicKey: string } => {
  const path = join(dir, name)
  run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `prbox-test-${name}`, "-f", path])
  return { path, publicKey: readFileSync(`${path}.pub`, "utf8").trim() }
}

/** `ssh-ed25519 AAAA…` of a public key line (its comment dropped). */
const keyOnly = (publicKey: string): string => publicKey.split(" ").slice(0, 2).join(" ")

const acquire = Effect.gen(function* () {
  const dir = mkdtempSync(join(tmpdir(), "prbox-remote-engine-"))
  const hostKey = keyPair(dir, "host_ed25519_key")
  const otherHostKey = keyPair(dir, "other_host_ed25519_key")
  const user = keyPair(dir, "id_ed25519")
  const containerId = yield* Effect.try(() =>
    startContainer([
      `PRBOX_HOST_KEY=${readFileSync(hostKey.path).toString("base64")}`,
      `PRBOX_AUTHORIZED_KEY=${user.publicKey}`
    ])
  ).pipe(
    Effect.tapError(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))),
    Effect.orDie
  )
  return { dir, hostKey, otherHostKey, user, containerId }
})

const release = ({ dir, containerId }: { readonly dir: string; readonly containerId: string }) =>
  Effect.sync(() => {
    // With its anonymous volume: the remote engine's images and containers go with it.
    run("docker", ["rm", "--force", "--volumes", containerId])
    rmSync(dir, { recursive: true, force: true })
  })

/** A Docker client over SSH for the test's own use (loading images); the product's is NodeDocker. */
const sshDockerode = (transport: SshTransport.SshTransport): Dockerode =>
  new Dockerode({ host: "docker", port: 80, protocol: "http", agent: transport.agent } as DockerOptions)

const loadInto = (api: Dockerode, tag: string) =>
  Effect.tryPromise(async () => {
    const present = await api
      .getImage(tag)
      .inspect()
      .then(
        () => true,
        () => false
      )
    if (present) return
    const save = spawn("docker", ["save", tag], { stdio: ["ignore", "pipe", "inherit"] })
    const answer = await api.loadImage(save.stdout)
    const text = await new Promise<string>((resolve, reject) => {
      let body = ""
      answer.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8")
      })
      answer.on("end", () => resolve(body))
      answer.on("error", reject)
    })
    if (/"error"/.test(text)) throw new Error(`loading ${tag} into the remote engine: ${text}`)
  }).pipe(Effect.orDie)

/**
 * Starts a remote engine for the scope: returns once its Docker API answers
 * over SSH (bounded: 60 s), removes it (and its volume) when the scope closes.
 */
export const startRemoteEngine: Effect.Effect<RemoteEngine, never, Scope.Scope> = Effect.gen(function* () {
  const started = yield* Effect.acquireRelease(acquire, release)
  const published = run("docker", ["port", started.containerId, "22/tcp"]).split("\n")[0] ?? ""
  const port = Number(/^127\.0\.0\.1:(\d+)$/.exec(published)?.[1])
  if (!Number.isInteger(port)) return yield* Effect.die(new Error(`sshd is not published on 127.0.0.1: ${published}`))
  const knownHostsFile = join(started.dir, "known_hosts")
  writeFileSync(knownHostsFile, `[127.0.0.1]:${port} ${keyOnly(started.hostKey.publicKey)}\n`)
  const address = `ssh://prbox@127.0.0.1:${port}`
  const transport = yield* SshTransport.make({ address, knownHostsFile, identityFile: started.user.path }).pipe(
    Effect.orDie
  )
  const api = sshDockerode(transport)
  yield* Effect.tryPromise({ try: () => api.ping(), catch: (cause) => cause as Error }).pipe(
    Effect.retry({ schedule: Schedule.spaced(250), times: 240 }),
    Effect.catch((error) =>
      Effect.die(
        new Error(
          `the remote engine did not answer over SSH within 60 s (${error.message}); its log:\n${containerLog(started.containerId)}`
        )
      )
    )
  )
  return {
    address,
    port,
    user: "prbox",
    knownHostsFile,
    identityFile: started.user.path,
    hostKey: keyOnly(started.hostKey.publicKey),
    otherHostKey: keyOnly(started.otherHostKey.publicKey),
    containerId: started.containerId,
    loadImage: (tag) => loadInto(api, tag),
    stop: () => dockerAsync(["stop", "--time", "1", started.containerId]).pipe(Effect.asVoid, Effect.orDie)
  }
})

export interface TcpRelay {
  readonly port: number
  /** Connections accepted so far. */
  readonly accepted: () => number
  /** Closes every open connection (both ends); new connections are still relayed. */
  readonly cut: () => void
}

/** A relay on 127.0.0.1 to `targetPort`, owned by the test to cut connections; closed with the scope. */
export const startTcpRelay = (targetPort: number): Effect.Effect<TcpRelay, never, Scope.Scope> =>
  Effect.gen(function* () {
    const open = new Set<Socket>()
    let accepted = 0
    const track = (socket: Socket) => {
      open.add(socket)
      socket.on("close", () => open.delete(socket))
      socket.on("error", () => socket.destroy())
    }
    const cut = () => {
      for (const socket of open) socket.destroy()
    }
    const server = createServer((client) => {
      accepted += 1
      const upstream = connect(targetPort, "127.0.0.1")
      track(client)
      track(upstream)
      client.on("close", () => upstream.destroy())
      upstream.on("close", () => client.destroy())
      client.pipe(upstream).pipe(client)
    })
    yield* Effect.acquireRelease(
      Effect.callback<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
      () =>
        Effect.callback<void>((resume) => {
          cut()
          server.close(() => resume(Effect.void))
        })
    )
    const bound = server.address()
    return {
      port: typeof bound === "object" && bound !== null ? bound.port : 0,
      accepted: () => accepted,
      cut
    }
  })

/** A remote engine (startRemoteEngine) holding `tags`, images of the local engine loaded into it. */
export const remoteEngineWith = (...tags: ReadonlyArray<string>): Effect.Effect<RemoteEngine, never, Scope.Scope> =>
  Effect.tap(startRemoteEngine, (remote) => Effect.forEach(tags, remote.loadImage, { discard: true }))
