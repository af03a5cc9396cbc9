// `pnpm bench mcp`: the round trip of `sandbox_exec ["true"]` through `prbox mcp`
// (the SDK's client over stdio → prboxd → the engine's exec) against an exec of
// the same command in the same container straight through the Docker Engine
// API (dockerode on a keep-alive connection: create, start, inspect, as the
// engine does), one closed loop each, in one run.
import { mkdirSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import { join } from "node:path"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import Dockerode from "dockerode"
import { healthzImage } from "../images/healthz.ts"
import { ensureImage } from "../images/images.ts"
import { callTool as callMcpTool, connectPrboxMcp } from "../testing/mcp-client.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  ms,
  percentile,
  round,
  sh,
  table,
  writeResult
} from "./common.ts"
import { type Daemon, spawnDaemon, waitForHealth } from "./daemon.ts"
import { BENCH_LABEL } from "./engine.ts"

export interface McpBenchOptions {
  readonly seconds: number
}

const TARGET_RATIO = 1.2
const WARMUP_MS = 1_000
const PULL_REQUEST = 1

/** A bare remote with `main` and `refs/pull/1/head`: the smallest PR there is. */
const makeRemote = async (root: string): Promise<string> => {
  const work = join(root, "work")
  const remote = join(root, "remote.git")
  await sh("git", ["init", "--quiet", "--initial-branch=main", work])
  writeFileSync(join(work, "README.md"), "bench\n")
  await sh("git", ["-C", work, "add", "README.md"])
  await sh("git", [
    "-C",
    work,
    "-c",
    "user.name=bench",
    "-c",
    "user.email=bench@localhost",
    "commit",
    "--quiet",
    "-m",
    "bench"
  ])
  await sh("git", ["init", "--quiet", "--bare", "--initial-branch=main", remote])
  await sh("git", [
    "-C",
    work,
    "push",
    "--quiet",
    remote,
    "HEAD:refs/heads/main",
    `HEAD:refs/pull/${PULL_REQUEST}/head`
  ])
  return remote
}

/** A tool's structured result; its error fails the bench. */
const callTool = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await callMcpTool(client, name, args, { timeout: 180_000 })
  if (result.isError) throw new Error(`${name} failed: ${result.text}`)
  return result
}

/** Back-to-back calls for `durationMs` after a warm-up; each call's latency in ms. */
const closedLoop = async (durationMs: number, once: () => Promise<void>): Promise<Float64Array> => {
  const warmup = performance.now() + WARMUP_MS
  while (performance.now() < warmup) await once()
  const latencies: Array<number> = []
  const deadline = performance.now() + durationMs
  while (performance.now() < deadline) {
    const t0 = performance.now()
    await once()
    latencies.push(performance.now() - t0)
  }
  return Float64Array.from(latencies).sort()
}

interface Arm {
  readonly name: string
  readonly calls: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly meanMs: number
}

const armOf = (name: string, sorted: Float64Array): Arm => ({
  name,
  calls: sorted.length,
  p50Ms: percentile(sorted, 50),
  p99Ms: percentile(sorted, 99),
  meanMs: sorted.reduce((sum, value) => sum + value, 0) / sorted.length
})

/** One exec of `argv` through the Engine API: create, start (attached, read to the end), inspect. */
const dockerExec = async (
  docker: Dockerode,
  containerId: string,
  user: string,
  argv: Array<string>
): Promise<number> => {
  const exec = await docker.getContainer(containerId).exec({
    Cmd: argv,
    User: user,
    AttachStdout: true,
    AttachStderr: true
  })
  const stream = await exec.start({ hijack: true, stdin: false })
  await new Promise<void>((resolve, reject) => {
    stream.on("end", resolve)
    stream.on("close", resolve)
    stream.on("error", reject)
    stream.resume()
  })
  const inspected = await exec.inspect()
  return inspected.ExitCode ?? -1
}

export const runMcp = async (options: McpBenchOptions): Promise<void> => {
  if (options.seconds < 1) throw new Error("--seconds must be at least 1")
  const startedAt = performance.now()
  const facts = machineFacts()
  const image = await ensureImage(healthzImage)
  const root = makeRoot("mcp")
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  writeFileSync(join(home, "config.json"), JSON.stringify({ image, labels: { [BENCH_LABEL]: "1" } }))
  const socketPath = join(home, "run", "prboxd.sock")
  let daemon: Daemon | undefined
  let client: Client | undefined
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  let mcp: Arm
  let direct: Arm
  let sandboxId: string
  try {
    const remote = await makeRemote(root)
    log("starting prboxd ...")
    daemon = spawnDaemon(home)
    await waitForHealth(socketPath, daemon)
    client = await connectPrboxMcp(home, "inherit")
    log(`opening PR ${PULL_REQUEST} of ${remote} in ${image} through sandbox_open ...`)
    const opened = await callTool(client, "sandbox_open", { input: remote, pr: PULL_REQUEST })
    sandboxId = String(opened.structured.id)
    if (opened.structured.status !== "running") throw new Error(`the sandbox is ${opened.text}`)
    const containerId = await sh("docker", ["ps", "-q", "--no-trunc", "--filter", `label=dev.prbox.home=${home}`])
    // The direct arm runs as the user the engine runs commands as.
    const who = await callTool(client, "sandbox_exec", { id: sandboxId, command: 'echo "$(id -u):$(id -g)"' })
    const user = String(who.structured.stdout).trim()
    const docker = new Dockerode({ socketPath: "/var/run/docker.sock", agent } as Dockerode.DockerOptions)
    const mcpClient = client
    log(`sandbox_exec ["true"] through prbox mcp: ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s`)
    mcp = armOf(
      'sandbox_exec ["true"] via prbox mcp',
      await closedLoop(options.seconds * 1000, async () => {
        const result = await callTool(mcpClient, "sandbox_exec", { id: sandboxId, argv: ["true"] })
        if (result.structured.exitCode !== 0) throw new Error(`true exited ${String(result.structured.exitCode)}`)
      })
    )
    log(`exec ["true"] through dockerode: ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s`)
    direct = armOf(
      'exec ["true"] via dockerode',
      await closedLoop(options.seconds * 1000, async () => {
        const code = await dockerExec(docker, containerId, user, ["true"])
        if (code !== 0) throw new Error(`true exited ${code}`)
      })
    )
  } finally {
    agent.destroy()
    await client?.close()
    if (daemon !== undefined) {
      const stopped = await daemon.stop()
      log(`prboxd stopped (${stopped.signal ?? `exit ${stopped.code}`})`)
    }
    cleanupRoot(root)
    log(`removed ${root}`)
  }

  const ratio = mcp.p50Ms / direct.p50Ms
  const out: Array<string> = ["", "prbox bench mcp", describeMachine(facts)]
  out.push(
    `sandbox ${sandboxId} (${image}); one client, calls back to back, ${WARMUP_MS / 1000} s warm-up, then ${options.seconds} s per arm`,
    ""
  )
  out.push(
    table(
      ["arm", "calls", "p50", "mean", "p99"],
      [mcp, direct].map((arm) => [arm.name, String(arm.calls), ms(arm.p50Ms), ms(arm.meanMs), ms(arm.p99Ms)])
    ),
    ""
  )
  out.push(
    table(
      ["mcp vs dockerode", "measured", "target", ""],
      [["p50 ratio", `${ratio.toFixed(2)}x`, `≤ ${TARGET_RATIO}x`, check(ratio <= TARGET_RATIO)]]
    )
  )
  const file = writeResult("mcp", {
    seconds: options.seconds,
    warmupSeconds: WARMUP_MS / 1000,
    p50Ratio: round(ratio, 3),
    target: { max: TARGET_RATIO, met: ratio <= TARGET_RATIO },
    arms: [mcp, direct].map((arm) => ({
      name: arm.name,
      calls: arm.calls,
      p50Ms: round(arm.p50Ms, 2),
      meanMs: round(arm.meanMs, 2),
      p99Ms: round(arm.p99Ms, 2)
    })),
    image,
    machine: facts,
    wallSeconds: round((performance.now() - startedAt) / 1000)
  })
  out.push("", `wrote ${file}`)
  process.stdout.write(`${out.join("\n")}\n`)
}
