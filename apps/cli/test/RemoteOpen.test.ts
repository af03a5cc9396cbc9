import { execFileSync, spawn } from "node:child_process"
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  type RemoteEngine,
  startRemoteEngine,
  startTcpRelay,
  type TcpRelay
} from "../../../packages/docker/test/RemoteEngine.ts"
import { codeServerImage } from "../../../scripts/images/code-server.ts"
import { imageTag } from "../../../scripts/images/images.ts"
import { hostOf, portsOf, preview, startApp, tokenOf } from "./preview-support.ts"
import { CLI_MAIN, hasStackTrace, makeHome, prbox, tearDown, until } from "./support.ts"

// A sandbox opened, used, stopped, restarted and deleted on a second, real
// Docker engine reached over SSH (packages/docker/test/RemoteEngine.ts),
// which cannot see this machine's files: the workspace and home are carried
// into volumes there, the image goes across by save/load, and code-server is
// reached on this machine's 127.0.0.1 through the SSH connection. The SSH
// connection goes through a TCP relay the test owns, so it can be cut.
// A sandbox of the same home on the local engine is untouched throughout.

const CODE_SERVER_IMAGE = imageTag(codeServerImage)
/** prbox's own repository stands in for a real one: its history, its files, its links. */
const PROJECT = fileURLToPath(new URL("../../..", import.meta.url))

let scope: Scope.Closeable
let remote: RemoteEngine
let relay: TcpRelay
let home = ""
let userHome = ""
let env: Record<string, string> = {}
let repository = ""
let prHead = ""
let localId = ""
let localUrl = ""
let remoteId = ""
let remoteUrl = ""

const git = (cwd: string, ...args: ReadonlyArray<string>) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim()

/** The remote engine's own docker CLI, run inside it. */
const onRemote = (...args: ReadonlyArray<string>) =>
  execFileSync("docker", ["exec", remote.containerId, "docker", ...args], { encoding: "utf8" }).trim()

const local = (...args: ReadonlyArray<string>) => execFileSync("docker", args, { encoding: "utf8" }).trim()

/**
 * A bare copy of this repository: its head is `refs/pull/7/head` (opened on
 * the remote engine, and PR 9 for the fault), its parent PR 8 (on the local one).
 */
const projectRemote = (root: string) => {
  const path = join(root, "project.git")
  execFileSync("git", ["clone", "--quiet", "--bare", "--no-local", PROJECT, path])
  const head = git(path, "rev-parse", "HEAD")
  let parent = head
  try {
    parent = git(path, "rev-parse", "--verify", "--quiet", "HEAD~1^{commit}")
  } catch {
    // A shallow checkout has no parent: both PRs at its head.
  }
  git(path, "update-ref", "refs/pull/7/head", head)
  git(path, "update-ref", "refs/pull/8/head", parent)
  git(path, "update-ref", "refs/pull/9/head", head)
  return { path, head }
}

const writeConfig = (runtime: Record<string, unknown> | undefined, extra: Record<string, unknown> = {}) => {
  const file = join(home, "config.json")
  const config = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
  const { runtime: _, ...rest } = config
  writeFileSync(file, JSON.stringify({ ...(runtime === undefined ? rest : { ...rest, runtime }), ...extra }, null, 2))
}

const running = (stdout: string) => /sandbox ([a-z0-9]{12}) is running: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout)

const statusOf = async (id: string) => {
  const run = await prbox(home, ["status", id, "--json"], env)
  return JSON.parse(run.stdout) as { status: string; engine: string | null; containerId: string | null }
}

const healthz = async (url: string) => (await fetch(`${url}healthz`)).status

const login = async (url: string, id: string) => {
  const password = (await prbox(home, ["password", id], env)).stdout.trim()
  const answer = await fetch(`${url}login`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password }).toString()
  })
  return answer.status
}

const volumesOf = (id: string) => onRemote("volume", "ls", "-q", "--filter", `label=dev.prbox.sandbox=${id}`)

beforeAll(async () => {
  scope = await Effect.runPromise(Scope.make())
  remote = await Effect.runPromise(startRemoteEngine.pipe(Scope.provide(scope)))
  relay = await Effect.runPromise(startTcpRelay(remote.port).pipe(Scope.provide(scope)))
  home = makeHome("cli-remote-open", { image: CODE_SERVER_IMAGE, healthTimeoutSeconds: 120 })
  userHome = mkdtempSync(join(tmpdir(), "prbox-cli-remote-open-user-"))
  const ssh = join(userHome, ".ssh")
  mkdirSync(ssh, { mode: 0o700 })
  copyFileSync(remote.identityFile, join(ssh, "id_ed25519"))
  chmodSync(join(ssh, "id_ed25519"), 0o600)
  // The relay's port is the address prbox knows: the remote's host key, listed under it.
  const entry = readFileSync(remote.knownHostsFile, "utf8").replace(`]:${remote.port} `, `]:${relay.port} `)
  writeFileSync(join(ssh, "known_hosts"), entry)
  env = {
    HOME: userHome,
    SSH_AUTH_SOCK: "",
    DOCKER_HOST: "",
    DOCKER_CONTEXT: "",
    DOCKER_CONFIG: join(userHome, ".docker")
  }
  const project = projectRemote(home)
  repository = project.path
  prHead = project.head
}, 240_000)

afterAll(async () => {
  if (home !== "") await tearDown(home)
  if (userHome !== "") rmSync(userHome, { recursive: true, force: true })
  if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
}, 120_000)

describe("a sandbox on a remote engine over SSH", () => {
  it("a sandbox on the local engine first, then the daemon restarted on the remote engine", async () => {
    const opened = await prbox(home, ["open", repository, "--pr", "8"], env)
    expect(opened.code, opened.stderr).toBe(0)
    ;[, localId = "", localUrl = ""] = running(opened.stdout) ?? []
    expect((await statusOf(localId)).engine).toBeNull()
    expect((await prbox(home, ["daemon", "stop"], env)).code).toBe(0)
    // A warm pool from here on: the environment (no create-time steps) is then worth a prebuild, on this machine's engine only.
    writeConfig({ docker: { host: `ssh://prbox@127.0.0.1:${relay.port}` } }, { warmPool: { size: 1, idleMinutes: 30 } })
  }, 240_000)

  it("open: the image and the workspace go across, and code-server answers and logs in on this machine", async () => {
    const opened = await prbox(home, ["open", repository, "--pr", "7"], env)
    expect(opened.code, `${opened.stdout}${opened.stderr}`).toBe(0)
    expect(hasStackTrace(opened.stderr)).toBe(false)
    ;[, remoteId = "", remoteUrl = ""] = running(opened.stdout) ?? []
    expect(remoteId).not.toBe(localId)
    // Progress says what went across.
    expect(opened.stderr).toMatch(/copying the workspace/i)
    const row = await statusOf(remoteId)
    expect(row.engine).toBe(`ssh://prbox@127.0.0.1:${relay.port}`)
    // The container is on the remote, not here.
    expect(onRemote("ps", "-q", "--no-trunc")).toContain(row.containerId)
    expect(local("ps", "-aq", "--no-trunc", "--filter", `label=dev.prbox.sandbox=${remoteId}`)).toBe("")
    // The workspace in the container is the PR's head, with its files.
    const head = await prbox(home, ["exec", remoteId, "--", "git", "rev-parse", "HEAD"], env)
    expect(head.stdout.trim(), head.stderr).toBe(prHead)
    const status = await prbox(home, ["exec", remoteId, "--", "git", "status", "--porcelain"], env)
    expect(status.stdout.trim(), status.stderr).toBe("")
    // Its ports are the remote's loopback only.
    const bindings = onRemote("inspect", "--format", "{{json .HostConfig.PortBindings}}", row.containerId ?? "")
    for (const [, binds] of Object.entries(JSON.parse(bindings) as Record<string, Array<{ HostIp: string }>>)) {
      for (const bind of binds) expect(bind.HostIp).toBe("127.0.0.1")
    }
    expect(await healthz(remoteUrl)).toBe(200)
    expect(await login(remoteUrl, remoteId)).toBe(302)
    // Today's path on a remote engine: no prebuild made there, no pool container claimed.
    const log = await prbox(home, ["logs", remoteId], env)
    expect(log.stdout).toContain("no prebuild made: the engine is remote")
    expect(log.stdout).not.toContain("warm pool")
  }, 600_000)

  it("the SSH connection cut while code-server is in use: the next request goes through a new one", async () => {
    const before = relay.accepted()
    relay.cut()
    await until("code-server to answer again", async () => (await healthz(remoteUrl).catch(() => 0)) === 200, {
      timeoutMs: 30_000,
      intervalMs: 200
    })
    expect(relay.accepted()).toBeGreaterThan(before)
  }, 60_000)

  it("stop and restart keep the URL", async () => {
    expect((await prbox(home, ["stop", remoteId], env)).code).toBe(0)
    await expect(healthz(remoteUrl)).rejects.toThrow()
    const restarted = await prbox(home, ["restart", remoteId], env)
    expect(restarted.code, restarted.stderr).toBe(0)
    expect(restarted.stdout).toContain(remoteUrl)
    expect(await healthz(remoteUrl)).toBe(200)
  }, 240_000)

  it("a preview of the sandbox's app is reached through prboxd here, over SSH", async () => {
    await startApp(home, remoteId, 3000, "0.0.0.0", "remote-app")
    await until(
      "port 3000 to be discovered",
      async () => (await portsOf(home, remoteId)).ports.some((entry) => entry.port === 3000 && entry.listening),
      { timeoutMs: 30_000, intervalMs: 200 }
    )
    const { previewPort } = await portsOf(home, remoteId)
    const answer = await preview(previewPort, {
      host: hostOf(remoteId, 3000, previewPort),
      headers: { authorization: `Bearer ${await tokenOf(home, remoteId)}` }
    })
    expect(answer.status).toBe(200)
    expect(answer.text).toContain("hello from remote-app")
  }, 300_000)

  it("update moves the container's copy to the PR's new head; this machine's copy is not touched", async () => {
    const work = join(home, "project-work")
    execFileSync("git", ["clone", "--quiet", repository, work])
    git(work, "checkout", "--quiet", "--detach", prHead)
    writeFileSync(join(work, "remote-update.txt"), "pushed after the open\n")
    git(work, "add", "remote-update.txt")
    git(work, "-c", "user.name=prbox test", "-c", "user.email=test@prbox.invalid", "commit", "--quiet", "-m", "more")
    const pushed = git(work, "rev-parse", "HEAD")
    git(work, "push", "--quiet", repository, `${pushed}:refs/pull/7/head`)
    const updated = await prbox(home, ["update", remoteId], env)
    expect(updated.code, `${updated.stdout}${updated.stderr}`).toBe(0)
    const head = await prbox(home, ["exec", remoteId, "--", "git", "rev-parse", "HEAD"], env)
    expect(head.stdout.trim(), head.stderr).toBe(pushed)
    const file = await prbox(home, ["exec", remoteId, "--", "cat", "remote-update.txt"], env)
    expect(file.stdout).toBe("pushed after the open\n")
    // The host's workspace stays where the open left it: the container's copy is the sandbox's truth.
    const hostCopy = join(home, "sandboxes", remoteId, "sealed", "workspace")
    expect(git(hostCopy, "-c", `safe.directory=${hostCopy}`, "rev-parse", "HEAD")).toBe(prHead)
  }, 120_000)

  it("rm leaves no container and no volume on the remote; the local sandbox ran throughout", async () => {
    const { containerId } = await statusOf(remoteId)
    expect(volumesOf(remoteId)).not.toBe("")
    expect((await prbox(home, ["rm", "--force", remoteId], env)).code).toBe(0)
    expect(onRemote("ps", "-aq", "--no-trunc")).not.toContain(containerId)
    expect(volumesOf(remoteId)).toBe("")
    const localRow = await statusOf(localId)
    expect(localRow.status).toBe("running")
    expect(await healthz(localUrl)).toBe(200)
  }, 120_000)

  it("the remote engine stopped mid-open: the row ends in error with a reason, and nothing is left half-made", async () => {
    const child = spawn(process.execPath, [CLI_MAIN, "open", repository, "--pr", "9"], {
      env: { ...process.env, PRBOX_HOME: home, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    let killed = false
    const ended = new Promise<number | null>((resolve) => child.once("close", resolve))
    // A latch on the open's own progress: the engine goes away while the workspace is carried across.
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
      if (!killed && /copying the workspace/i.test(stderr)) {
        killed = true
        execFileSync("docker", ["exec", remote.containerId, "pkill", "-x", "dockerd"])
      }
    })
    const code = await ended
    expect(killed, stderr).toBe(true)
    expect(code).not.toBe(0)
    expect(hasStackTrace(stderr)).toBe(false)
    const id = /sandbox ([a-z0-9]{12})/.exec(stderr)?.[1] ?? ""
    const row = await statusOf(id)
    expect(row.status).toBe("error")
    // The engine back, a reconcile (the daemon's start) leaves nothing of it there.
    const answers = (args: ReadonlyArray<string>) => {
      try {
        execFileSync("docker", ["exec", remote.containerId, ...args], { stdio: "ignore" })
        return true
      } catch {
        return false
      }
    }
    // The old dockerd shuts down (and lets go of its pid file) before a new one can start.
    await until("the remote's dockerd to exit", () => !answers(["pgrep", "-x", "dockerd"]), { timeoutMs: 60_000 })
    execFileSync("docker", ["exec", "-d", remote.containerId, "dockerd", "--host=unix:///var/run/docker.sock"])
    await until("the remote engine to answer", () => answers(["docker", "version"]), { timeoutMs: 60_000 })
    expect((await prbox(home, ["daemon", "stop"], env)).code).toBe(0)
    // The next command's daemon reconciles at start: at most the row's own container is there.
    const { containerId } = await statusOf(id)
    const left = onRemote("ps", "-aq", "--no-trunc", "--filter", `label=dev.prbox.sandbox=${id}`)
    expect(left === "" || left === containerId, left).toBe(true)
    const removed = await prbox(home, ["rm", id], env)
    expect(removed.code, removed.stderr).toBe(0)
    expect(onRemote("ps", "-aq", "--filter", `label=dev.prbox.sandbox=${id}`)).toBe("")
    expect(volumesOf(id)).toBe("")
  }, 300_000)
})
