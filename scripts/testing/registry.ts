import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, type Scope } from "effect"
import { startTokenServer, type TokenServer, type TokenServerOptions } from "./registry-token.ts"

/**
 * A real OCI registry on this machine for tests: Debian's `docker-registry`
 * (the CNCF distribution registry, installed by `scripts/setup`) on
 * 127.0.0.1 at a free port, its storage in a temp folder, optionally behind
 * htpasswd auth. Started in a scope, stopped and its folder removed with it.
 * Plain HTTP, which Docker and the devcontainers CLI allow only to localhost.
 */

export interface RegistryAuth {
  readonly user: string
  readonly password: string
}

export interface TestRegistry {
  /** `localhost:<port>`: how references name it (`localhost:<port>/org/feature:1`). */
  readonly host: string
  readonly port: number
  /** `http://127.0.0.1:<port>`. */
  readonly url: string
  /** The registry's storage root (blobs under `docker/registry/v2/blobs/sha256/<2>/<hex>/data`). */
  readonly storageDir: string
  /** Set when it requires htpasswd (Basic) auth. */
  readonly auth: RegistryAuth | undefined
  /** Set when it requires token (Bearer) auth from this server. */
  readonly token: TokenServer | undefined
}

const REGISTRY_BINARY = "/usr/bin/docker-registry"
const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 10_000

/** A port nothing listens on now (the registry binds it next; a lost race is retried). */
const freePort = () =>
  Effect.callback<number, Error>((resume) => {
    const server = createServer()
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resume(Effect.succeed(port)))
    })
  })

/** The config's `auth` section: htpasswd, or a token server's realm and certificate, or none. */
const authYaml = (htpasswd: string | undefined, token: TokenServer | undefined): ReadonlyArray<string> => {
  if (htpasswd !== undefined) return ["auth:", "  htpasswd:", "    realm: prbox-test", `    path: ${htpasswd}`]
  if (token === undefined) return []
  return [
    "auth:",
    "  token:",
    `    realm: ${token.realm}`,
    `    service: ${token.service}`,
    `    issuer: ${token.issuer}`,
    `    rootcertbundle: ${token.certPath}`
  ]
}

const configYaml = (storageDir: string, port: number, auth: ReadonlyArray<string>): string =>
  [
    "version: 0.1",
    "log:",
    "  level: info",
    "  accesslog:",
    "    disabled: true",
    "storage:",
    "  filesystem:",
    `    rootdirectory: ${storageDir}`,
    "  delete:",
    "    enabled: true",
    "http:",
    `  addr: 127.0.0.1:${port}`,
    `  secret: ${randomBytes(16).toString("hex")}`,
    ...auth,
    ""
  ].join("\n")

/**
 * Waits for the registry's own "listening on" line (a latch, not a sleep):
 * fails with its last output when it exits first or stays silent too long.
 */
const awaitListening = (child: ChildProcess, port: number) =>
  Effect.callback<void, Error>((resume) => {
    let output = ""
    const onData = (chunk: Buffer) => {
      output = `${output}${chunk.toString("utf8")}`.slice(-4000)
      if (output.includes(`listening on 127.0.0.1:${port}`)) done(Effect.void)
    }
    const onExit = (code: number | null) =>
      done(Effect.fail(new Error(`docker-registry exited (${code}) before listening:\n${output}`)))
    const timer = setTimeout(
      () => done(Effect.fail(new Error(`docker-registry did not listen within ${START_TIMEOUT_MS} ms:\n${output}`))),
      START_TIMEOUT_MS
    )
    const done = (result: Effect.Effect<void, Error>) => {
      clearTimeout(timer)
      child.stdout?.off("data", onData)
      child.stderr?.off("data", onData)
      child.off("exit", onExit)
      // Later output is drained and dropped, so the registry never blocks on a full pipe.
      child.stdout?.resume()
      child.stderr?.resume()
      resume(result)
    }
    child.stdout?.on("data", onData)
    child.stderr?.on("data", onData)
    child.once("exit", onExit)
  })

/** Stops the process: SIGTERM, then SIGKILL if it has not exited in time. */
const stop = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS)
    child.once("exit", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    child.kill("SIGTERM")
  })

const start = (dir: string, auth: RegistryAuth | undefined, tokenOptions: TokenServerOptions | undefined) =>
  Effect.gen(function* () {
    const token = tokenOptions === undefined ? undefined : yield* startTokenServer(dir, tokenOptions)
    const port = yield* freePort()
    const storageDir = join(dir, "storage")
    let htpasswd: string | undefined
    if (auth !== undefined) {
      htpasswd = join(dir, "htpasswd")
      writeFileSync(htpasswd, execFileSync("htpasswd", ["-Bbn", auth.user, auth.password], { encoding: "utf8" }))
    }
    const config = join(dir, "config.yml")
    writeFileSync(config, configYaml(storageDir, port, authYaml(htpasswd, token)))
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(REGISTRY_BINARY, ["serve", config], { stdio: ["ignore", "pipe", "pipe"] })),
      stop
    )
    yield* awaitListening(child, port)
    const registry: TestRegistry = {
      host: `localhost:${port}`,
      port,
      url: `http://127.0.0.1:${port}`,
      storageDir,
      auth,
      token
    }
    // The API root answers (401 behind auth): the registry serves, not only listens.
    const answer = yield* Effect.tryPromise(() => fetch(`${registry.url}/v2/`))
    if (answer.status !== 200 && answer.status !== 401) {
      return yield* Effect.fail(new Error(`docker-registry's /v2/ answered ${answer.status}`))
    }
    return registry
  })

/**
 * Starts a registry for the scope; `auth` puts it behind htpasswd, `token`
 * behind token auth (scripts/testing/registry-token.ts). A port taken
 * between choosing and binding it is retried with another, twice.
 */
export const startRegistry = (
  options: { readonly auth?: RegistryAuth; readonly token?: TokenServerOptions } = {}
): Effect.Effect<TestRegistry, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "prbox-registry-"))),
      (path) => Effect.sync(() => rmSync(path, { recursive: true, force: true }))
    )
    return yield* start(dir, options.auth, options.token).pipe(Effect.retry({ times: 2 }))
  }).pipe(Effect.mapError((error) => (error instanceof Error ? error : new Error(String(error)))))

/** A user and password made for one test registry. */
export const testAuth = (): RegistryAuth => ({ user: "prbox-test", password: randomBytes(12).toString("hex") })
