import { execFileSync } from "node:child_process"
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { type RemoteEngine, startRemoteEngine } from "../../../packages/docker/test/RemoteEngine.ts"
import { makeRemote } from "../../../packages/git/test/helpers.ts"
import { healthzTag, writeConfig } from "../../daemon/test/support.ts"
import { MIN_DOCKER, versionBelow } from "../src/Doctor.ts"
import { hasStackTrace, makeHome, prbox, tearDown } from "./support.ts"

// The CLI against a second, real Docker engine reached over SSH
// (packages/docker/test/RemoteEngine.ts): the engine config.json names,
// with the user's known_hosts and key read from a HOME the test makes.

let scope: Scope.Closeable
let remote: RemoteEngine

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  remote = await Effect.runPromise(startRemoteEngine.pipe(Scope.provide(scope)))
  // The image the bind-mount probe runs (config.json's, makeHome's healthz): the remote has no registry.
  await Effect.runPromise(remote.loadImage(healthzTag))
}, 180_000)

afterAll(async () => {
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
})

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/**
 * A PRBOX_HOME whose config.json names `address`, and a HOME whose `.ssh`
 * holds the remote's key and, unless told otherwise, its known_hosts entry.
 * Both go (the daemon stopped first) after the test.
 */
const setUp = (address: string, options: { readonly knownHosts?: "remote's" | "empty" } = {}) => {
  const prboxHome = makeHome("cli-remote", { runtime: { docker: { host: address } } })
  const userHome = mkdtempSync(join(tmpdir(), "prbox-cli-remote-user-"))
  cleanups.push(() => rmSync(userHome, { recursive: true, force: true }))
  cleanups.push(() => tearDown(prboxHome))
  const ssh = join(userHome, ".ssh")
  mkdirSync(ssh, { mode: 0o700 })
  copyFileSync(remote.identityFile, join(ssh, "id_ed25519"))
  chmodSync(join(ssh, "id_ed25519"), 0o600)
  if ((options.knownHosts ?? "remote's") === "remote's") copyFileSync(remote.knownHostsFile, join(ssh, "known_hosts"))
  else writeFileSync(join(ssh, "known_hosts"), "")
  const env = {
    HOME: userHome,
    // Only the key in HOME authenticates: not an agent of whoever runs the tests.
    SSH_AUTH_SOCK: "",
    DOCKER_HOST: "",
    DOCKER_CONTEXT: "",
    DOCKER_CONFIG: join(userHome, ".docker")
  }
  return { prboxHome, userHome, env }
}

type Setup = ReturnType<typeof setUp>

const doctor = async ({ prboxHome, env }: Setup) => {
  const run = await prbox(prboxHome, ["doctor", "--json"], env)
  const report = JSON.parse(run.stdout) as {
    readonly checks: ReadonlyArray<{ readonly name: string; readonly level: string; readonly detail: string }>
    readonly engine: Record<string, unknown>
  }
  return { run, report, check: (name: string) => report.checks.find((check) => check.name === name) }
}

/** `prbox open` of a local bare repository's PR 1: the daemon needs the engine for it. */
const open = ({ prboxHome, env }: Setup) => prbox(prboxHome, ["open", makeRemote(prboxHome).path, "--pr", "1"], env)

/** Every container on the remote engine, asked through its own docker CLI. */
const remoteContainers = () =>
  execFileSync("docker", ["exec", remote.containerId, "docker", "ps", "-aq"], { encoding: "utf8" }).trim()

/** Every volume on the remote engine, the same way. */
const remoteVolumes = () =>
  execFileSync("docker", ["exec", remote.containerId, "docker", "volume", "ls", "-q"], { encoding: "utf8" }).trim()

/** The remote engine's version, as its own docker CLI says. */
const remoteDockerVersion = () =>
  execFileSync("docker", ["exec", remote.containerId, "docker", "version", "--format", "{{.Server.Version}}"], {
    encoding: "utf8"
  }).trim()

/** A part of a message said twice in a row (`container.list: container.list: `). */
const REPEATED = /(\b[\w.]+: )\1/

/** `ssh://<user>@127.0.0.1:<port>`, the remote's address with another user. */
const withUser = (user: string) => remote.address.replace(/^ssh:\/\/[^@]+@/, `ssh://${user}@`)

describe("the CLI on a remote engine over SSH", () => {
  it("doctor: the remote's address from config.json, its version, and remote by the bind-mount probe", async () => {
    const setup = setUp(remote.address)
    const { run, report, check } = await doctor(setup)
    expect(report.engine, run.stderr).toMatchObject({
      address: remote.address,
      source: "config",
      location: "remote",
      version: expect.any(String),
      apiVersion: expect.any(String)
    })
    // The remote's own Docker (Debian's, older than MIN_DOCKER: a warning, never a failure).
    const version = String(report.engine.version)
    expect(version).toBe(remoteDockerVersion())
    expect(check("docker")?.level).toBe(versionBelow(version, MIN_DOCKER) ? "warn" : "ok")
    expect(check("docker")?.detail).toContain(`Docker ${version} (API ${String(report.engine.apiVersion)})`)
    expect(check("engine")).toMatchObject({ level: "ok" })
    expect(check("engine")?.detail).toMatch(/: remote; .* does not exist where the engine runs$/)
    // The probe's container is gone from the remote engine.
    expect(remoteContainers()).toBe("")
  })

  it("an unknown host key: doctor says how to add it, open fails with exit code 6 and the same advice", async () => {
    const setup = setUp(remote.address, { knownHosts: "empty" })
    const { run, report, check } = await doctor(setup)
    expect(run.code).toBe(1)
    expect(report.engine).toMatchObject({ address: remote.address, version: null, location: "unknown" })
    expect(check("docker")?.level).toBe("fail")
    expect(check("engine")?.level).toBe("fail")
    expect(check("engine")?.detail).toContain(`ssh-keyscan -p ${remote.port} 127.0.0.1 >> `)

    const opened = await open(setup)
    expect(opened.code, opened.stderr).toBe(6)
    expect(opened.stderr).toContain(
      `[127.0.0.1]:${remote.port} is not in ${join(setup.userHome, ".ssh", "known_hosts")}`
    )
    expect(opened.stderr).not.toMatch(REPEATED)
    expect(opened.stderr).toContain(`ssh-keyscan -p ${remote.port} 127.0.0.1 >> `)
    expect(hasStackTrace(opened.stderr)).toBe(false)
    expect(remoteContainers()).toBe("")
  })

  it("a user the remote does not have: doctor and open both fail with the auth message, open with exit code 6", async () => {
    const setup = setUp(withUser("nobody-here"))
    const { run, check } = await doctor(setup)
    expect(run.code).toBe(1)
    expect(check("engine")?.level).toBe("fail")
    expect(check("engine")?.detail).toContain("the server accepted none of the keys offered")

    const opened = await open(setup)
    expect(opened.code, opened.stderr).toBe(6)
    expect(opened.stderr).toContain(`${withUser("nobody-here")}: the server accepted none of the keys offered`)
    expect(opened.stderr).not.toMatch(REPEATED)
    expect(opened.stderr).toContain(join(setup.userHome, ".ssh", "id_ed25519"))
    expect(hasStackTrace(opened.stderr)).toBe(false)
    // prune cannot know which containers are orphans: it fails closed, never "nothing to prune".
    const pruned = await prbox(setup.prboxHome, ["prune"], setup.env)
    expect(pruned.code, pruned.stdout).toBe(6)
    expect(pruned.stderr).toContain("the server accepted none of the keys offered")
    expect(remoteContainers()).toBe("")
  })

  it("open with the user's own mounts on an engine that cannot see this machine's files is refused before anything is made there", async () => {
    const setup = setUp(remote.address)
    const data = join(setup.userHome, "data")
    mkdirSync(data)
    writeConfig(setup.prboxHome, {
      runtime: { docker: { host: remote.address } },
      mounts: [{ source: data, target: "/data", readOnly: true }]
    })
    const opened = await open(setup)
    expect(opened.code, opened.stdout).not.toBe(0)
    expect(`${opened.stdout}${opened.stderr}`).toContain(`cannot mount this machine's folders (${data})`)
    expect(hasStackTrace(opened.stderr)).toBe(false)
    const listed = await prbox(setup.prboxHome, ["ls", "-a", "--json"], setup.env)
    const rows = JSON.parse(listed.stdout) as ReadonlyArray<{
      status: string
      engine: string | null
      containerId: string | null
    }>
    expect(rows).toMatchObject([{ status: "error", engine: remote.address }])
    expect(remoteContainers()).toBe("")
    expect(remoteVolumes()).toBe("")
  })
})
