// `pnpm bench preview`: requests/s and latency of a small app inside a real
// sandbox, through prboxd's preview server and directly on the container's
// bridge IP, with the same closed-loop generator on both arms.
import { readdirSync, readFileSync } from "node:fs"
import type { Agent, RequestOptions } from "node:http"
import { join } from "node:path"
import { codeServerImage } from "../images/code-server.ts"
import { ensureImage } from "../images/images.ts"
import { startPreviewAppArgv } from "../testing/preview-app.ts"
import {
  BenchStopped,
  check,
  cleanupRoot,
  closedLoop,
  describeMachine,
  httpRequest,
  type LoadRun,
  log,
  machineFacts,
  makeRoot,
  ms,
  round,
  sh,
  sleep,
  table,
  writeResult
} from "./common.ts"
import {
  api,
  cpuSeconds,
  type Daemon,
  type DaemonUse,
  daemonHome,
  expectJson,
  spawnDaemon,
  waitForHealth,
  watchDaemon
} from "./daemon.ts"
import { benchRepo, DEFAULT_REPO } from "./repo.ts"

export interface PreviewOptions {
  readonly seconds: number
  readonly connections: number
}

const TARGETS = { throughputRatio: 0.8, p99AddedMs: 2 } as const
const APP_PORT = 3000
const WARMUP_MS = 2_000
const OPEN_TIMEOUT_MS = 180_000
const PULL_REQUEST = 1

interface Sandbox {
  readonly id: string
  readonly status: string
  readonly containerId: string | null
  readonly error: string | null
}

/** Opens the PR and waits until its sandbox is running. */
const openSandbox = async (socketPath: string, remote: string): Promise<Sandbox> => {
  const opened = expectJson<Sandbox>(
    await api(socketPath, "POST", "/v1/sandboxes", { input: remote, pr: PULL_REQUEST }),
    "POST /v1/sandboxes"
  )
  const deadline = performance.now() + OPEN_TIMEOUT_MS
  for (;;) {
    const row = expectJson<Sandbox>(await api(socketPath, "GET", `/v1/sandboxes/${opened.id}`), "GET /v1/sandboxes/:id")
    if (row.status === "running") return row
    if (row.status === "error" || row.status === "stopped")
      throw new Error(`the sandbox ended ${row.status}: ${row.error ?? ""}`)
    if (performance.now() > deadline) throw new Error(`the sandbox was still ${row.status} after the open timeout`)
    await sleep(250)
  }
}

/** The container's IP on its Docker network (the default bridge for a sandbox without a devcontainer). */
const bridgeIp = async (containerId: string): Promise<string> => {
  const out = await sh("docker", [
    "inspect",
    "--format",
    "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}",
    containerId
  ])
  const ip = out.split(" ").find((candidate) => candidate.length > 0)
  if (ip === undefined) throw new Error(`container ${containerId} has no IP address on a Docker network`)
  return ip
}

/** What the preview server needs from the daemon: its port and a bearer token. */
const previewAccess = async (socketPath: string, id: string): Promise<{ previewPort: number; token: string }> => {
  const ports = await api(socketPath, "GET", `/v1/sandboxes/${id}/ports`)
  const token = await api(socketPath, "GET", `/v1/sandboxes/${id}/preview-token`)
  if (ports.status === 404 || token.status === 404) {
    const missing = ports.status === 404 ? `GET /v1/sandboxes/${id}/ports` : `GET /v1/sandboxes/${id}/preview-token`
    throw new BenchStopped(
      `prboxd has no preview endpoints: ${missing} answered 404 (${(ports.status === 404 ? ports : token).body}). ` +
        "The direct arm ran (above); the preview arm needs a daemon with the preview server (issue 12)."
    )
  }
  const { previewPort } = expectJson<{ previewPort: number }>(ports, "GET /v1/sandboxes/:id/ports")
  return { previewPort, token: expectJson<{ token: string }>(token, "GET /v1/sandboxes/:id/preview-token").token }
}

interface Target {
  readonly name: string
  readonly request: RequestOptions
}

interface Arm extends LoadRun {
  readonly name: string
  readonly daemon: DaemonUse
  /** CPU of the app, the relay and its docker-proxy, in cores. */
  readonly hops: Readonly<Record<Hop, number>>
}

/** The other processes a request passes: found by their command lines (NUL-separated in /proc). */
const HOPS = {
  app: (cmdline: string) => cmdline.includes(`prbox-preview-app-${APP_PORT}.cjs`),
  relay: (cmdline: string) => cmdline.includes("PRBOX-RELAY/1"),
  dockerProxy: (cmdline: string) => cmdline.includes("-container-port\u000047919")
} as const

const cpuOf = (matches: (cmdline: string) => boolean): number => {
  let total = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (matches(readFileSync(`/proc/${entry}/cmdline`, "latin1"))) total += cpuSeconds(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return total
}

type Hop = keyof typeof HOPS

/** CPU of the app, the relay and the relay port's docker-proxy over a span, in cores. */
const watchHops = () => {
  const started = performance.now()
  const hops = Object.keys(HOPS) as Array<Hop>
  const before = new Map(hops.map((hop) => [hop, cpuOf(HOPS[hop])]))
  return (): Readonly<Record<Hop, number>> => {
    const seconds = (performance.now() - started) / 1000
    const cores = (hop: Hop) => (cpuOf(HOPS[hop]) - (before.get(hop) ?? 0)) / seconds
    return { app: cores("app"), relay: cores("relay"), dockerProxy: cores("dockerProxy") }
  }
}

/**
 * One probe (the app must say hello and have seen `/`), a warm-up, then the
 * measured run; an answer of another status or size than the probe's is a failure.
 */
const measure = async (target: Target, options: PreviewOptions, daemonPid: number): Promise<Arm> => {
  const probe = await httpRequest({ ...target.request, path: "/" }, true)
  if (probe.status !== 200 || !probe.body.startsWith("hello from bench") || !probe.body.includes("\npath / "))
    throw new Error(`${target.name}: GET / answered ${probe.status}: ${probe.body.slice(0, 300)}`)
  const send = async (agent: Agent) => {
    const answer = await httpRequest({ ...target.request, path: "/", agent })
    if (answer.status !== 200 || answer.bytes !== probe.bytes)
      throw new Error(`GET / answered ${answer.status} with ${answer.bytes} bytes (expected 200, ${probe.bytes})`)
    return "ok" as const
  }
  log(
    `${target.name}: ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s with ${options.connections} connections`
  )
  await closedLoop(options.connections, WARMUP_MS, send)
  const watch = watchDaemon(daemonPid)
  const hops = watchHops()
  const run = await closedLoop(options.connections, options.seconds * 1000, send)
  const arm = { ...run, name: target.name, daemon: watch.stop(), hops: hops() }
  log(
    `${target.name}: ${Math.round(arm.requestsPerSecond)} req/s, p50 ${ms(arm.p50Ms)}, p99 ${ms(arm.p99Ms)}, ` +
      `generator CPU ${Math.round(arm.generatorCores * 100)}%` +
      (arm.failed > 0 ? `, ${arm.failed} failed (first: ${arm.firstFailure})` : "")
  )
  return arm
}

const armJson = (arm: Arm) => ({
  seconds: round(arm.seconds, 2),
  ok: arm.ok,
  failed: arm.failed,
  firstFailure: arm.firstFailure,
  requestsPerSecond: Math.round(arm.requestsPerSecond),
  p50Ms: round(arm.p50Ms, 2),
  p99Ms: round(arm.p99Ms, 2),
  maxMs: round(arm.maxMs, 2),
  generatorCpuCores: round(arm.generatorCores, 2),
  daemonCpuCores: round(arm.daemon.cores, 2),
  daemonRssPeakMb: round(arm.daemon.rssPeakMb),
  appCpuCores: round(arm.hops.app, 2),
  relayCpuCores: round(arm.hops.relay, 2),
  dockerProxyCpuCores: round(arm.hops.dockerProxy, 2)
})

export const runPreview = async (options: PreviewOptions): Promise<void> => {
  if (options.connections < 1) throw new Error("--connections must be at least 1")
  if (options.seconds < 1) throw new Error("--seconds must be at least 1")
  const startedAt = performance.now()
  const facts = machineFacts()
  const image = await ensureImage(codeServerImage)
  const repo = await benchRepo(DEFAULT_REPO, log)
  const root = makeRoot("preview")
  const home = daemonHome(root, image)
  const socketPath = join(home, "run", "prboxd.sock")
  let daemon: Daemon | undefined
  let direct: Arm
  let preview: Arm
  let sandbox: Sandbox
  let access: { previewPort: number; token: string }
  try {
    log("starting prboxd ...")
    daemon = spawnDaemon(home)
    await waitForHealth(socketPath, daemon)
    log(`opening PR ${PULL_REQUEST} of ${repo.path} in ${image} ...`)
    sandbox = await openSandbox(socketPath, repo.path)
    const started = expectJson<{ exitCode: number | null; output: string }>(
      await api(socketPath, "POST", `/v1/sandboxes/${sandbox.id}/exec`, {
        argv: startPreviewAppArgv({ port: APP_PORT, name: "bench" }),
        timeoutMs: 60_000
      }),
      "POST /v1/sandboxes/:id/exec"
    )
    if (started.exitCode !== 0) throw new Error(`the app did not start (exit ${started.exitCode}): ${started.output}`)
    if (sandbox.containerId === null) throw new Error("the running sandbox has no container")
    const ip = await bridgeIp(sandbox.containerId)
    direct = await measure(
      { name: `direct http://${ip}:${APP_PORT}/`, request: { host: ip, port: APP_PORT } },
      options,
      daemon.pid
    )
    access = await previewAccess(socketPath, sandbox.id)
    const host = `${APP_PORT}.${sandbox.id}.localhost:${access.previewPort}`
    preview = await measure(
      {
        name: `preview http://${host}/`,
        request: {
          host: "127.0.0.1",
          port: access.previewPort,
          headers: { host, authorization: `Bearer ${access.token}` }
        }
      },
      options,
      daemon.pid
    )
  } finally {
    if (daemon !== undefined) {
      const stopped = await daemon.stop()
      log(`prboxd stopped (${stopped.signal ?? `exit ${stopped.code}`})`)
    }
    cleanupRoot(root)
    log(`removed ${root}`)
  }

  const ratio = preview.requestsPerSecond / direct.requestsPerSecond
  const p99Added = preview.p99Ms - direct.p99Ms
  const out: Array<string> = ["", "prbox bench preview", describeMachine(facts)]
  out.push(
    `app: scripts/testing/preview-app.cjs on 0.0.0.0:${APP_PORT} in sandbox ${sandbox.id} (${image}); ` +
      `GET / back to back on ${options.connections} keep-alive connections, ${WARMUP_MS / 1000} s warm-up per arm, ` +
      `then ${options.seconds} s; exact nearest-rank percentiles; the generator is this one Node process`,
    ""
  )
  out.push(
    table(
      [
        "arm",
        "req/s",
        "p50",
        "p99",
        "max",
        "failed",
        "generator CPU",
        "daemon CPU",
        "docker-proxy CPU",
        "relay CPU",
        "app CPU"
      ],
      [direct, preview].map((arm) => [
        arm.name,
        String(Math.round(arm.requestsPerSecond)),
        ms(arm.p50Ms),
        ms(arm.p99Ms),
        ms(arm.maxMs),
        String(arm.failed),
        `${Math.round(arm.generatorCores * 100)}%`,
        `${Math.round(arm.daemon.cores * 100)}%`,
        `${Math.round(arm.hops.dockerProxy * 100)}%`,
        `${Math.round(arm.hops.relay * 100)}%`,
        `${Math.round(arm.hops.app * 100)}%`
      ])
    ),
    ""
  )
  out.push(
    table(
      ["preview vs direct", "measured", "target", ""],
      [
        [
          "throughput",
          `${ratio.toFixed(2)}x`,
          `≥ ${TARGETS.throughputRatio}x`,
          check(ratio >= TARGETS.throughputRatio)
        ],
        ["p99 added", ms(p99Added), `≤ ${TARGETS.p99AddedMs} ms`, check(p99Added <= TARGETS.p99AddedMs)]
      ]
    )
  )
  for (const arm of [direct, preview]) {
    if (arm.firstFailure !== null) out.push(`${arm.name}: ${arm.failed} failed, first: ${arm.firstFailure}`)
  }
  const file = writeResult("preview", {
    connections: options.connections,
    seconds: options.seconds,
    warmupSeconds: WARMUP_MS / 1000,
    throughputRatio: round(ratio, 3),
    p99AddedMs: round(p99Added, 2),
    targets: {
      throughputRatio: { min: TARGETS.throughputRatio, met: ratio >= TARGETS.throughputRatio },
      p99AddedMs: { max: TARGETS.p99AddedMs, met: p99Added <= TARGETS.p99AddedMs }
    },
    direct: armJson(direct),
    preview: armJson(preview),
    previewPort: access.previewPort,
    image,
    client: "node:http, one keep-alive agent per connection, closed loop",
    machine: facts,
    wallSeconds: round((performance.now() - startedAt) / 1000)
  })
  out.push("", `wrote ${file}`)
  process.stdout.write(`${out.join("\n")}\n`)
}
