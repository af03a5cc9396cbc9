// `pnpm bench remote`: opening a PR on a remote Docker engine over SSH with
// prbox vs the same steps by hand with the docker CLI (`docker --host
// ssh://…`: a volume, the workspace copied in, the same image and command,
// its port on the remote's 127.0.0.1 forwarded by `ssh -L`, /healthz polled),
// alternating in one run against one remote engine (scripts/testing/remote-engine.ts).
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, copyFileSync, mkdirSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Exit, Scope } from "effect"
import { type RemoteEngine, startRemoteEngine } from "../testing/remote-engine.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  round,
  sh,
  table,
  writeResult
} from "./common.ts"
import { BENCH_LABEL } from "./engine.ts"
import { CODE_SERVER_ARGS, pollHealth, resolveImage, sandboxOptions } from "./open.ts"
import { benchRepo, DEFAULT_REPO } from "./repo.ts"

export interface RemoteOptions {
  /** `code-server` (default), `healthz`, or a local image tag. */
  readonly image: string
  readonly rounds: number
}

const TARGET_RATIO = 1.15
const PR = 1
const CLI_MAIN = fileURLToPath(new URL("../../apps/cli/src/main.ts", import.meta.url))

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const runProcess = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv): Promise<Run> =>
  new Promise((resolve) => {
    execFile(file, [...args], { env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    })
  })

/** A port nothing listens on now, on this machine's 127.0.0.1. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

// --- the raw side: the docker CLI and ssh, as a user would type them ----------

/**
 * OpenSSH reads `~/.ssh/config` from the passwd entry, not $HOME: the docker
 * CLI's `ssh` is a wrapper naming the run's config (the remote's key,
 * known_hosts and port) with -F.
 */
const sshSetup = (dir: string, remote: RemoteEngine) => {
  const config = join(dir, "ssh_config")
  writeFileSync(
    config,
    [
      "Host 127.0.0.1",
      `  Port ${remote.port}`,
      `  User ${remote.user}`,
      `  IdentityFile ${remote.identityFile}`,
      "  IdentitiesOnly yes",
      `  UserKnownHostsFile ${remote.knownHostsFile}`,
      "  StrictHostKeyChecking yes",
      "  BatchMode yes",
      ""
    ].join("\n"),
    { mode: 0o600 }
  )
  const bin = join(dir, "bin")
  mkdirSync(bin)
  writeFileSync(join(bin, "ssh"), `#!/bin/sh\nexec /usr/bin/ssh -F ${config} "$@"\n`, { mode: 0o755 })
  const env = {
    ...process.env,
    HOME: dir,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    DOCKER_CONFIG: join(dir, "docker")
  }
  return { config, env }
}

interface RawSteps {
  readonly total: number
  readonly steps: Readonly<Record<string, number>>
}

const rawOpen = async (
  root: string,
  round: number,
  repo: string,
  image: string,
  remote: RemoteEngine,
  ssh: ReturnType<typeof sshSetup>
): Promise<RawSteps> => {
  const docker = (...args: ReadonlyArray<string>) =>
    runProcess("docker", ["--host", remote.address, ...args], ssh.env).then((run) => {
      if (run.code !== 0) throw new Error(`docker ${args.join(" ")}: ${run.stderr.trim()}`)
      return run.stdout.trim()
    })
  const dir = join(root, `raw-${round}`)
  const volume = `prbox-bench-${randomBytes(4).toString("hex")}`
  const steps: Record<string, number> = {}
  let containerId = ""
  let forward: ChildProcess | undefined
  const step = async <A>(name: string, work: () => Promise<A>): Promise<A> => {
    const start = performance.now()
    const result = await work()
    steps[name] = performance.now() - start
    return result
  }
  const t0 = performance.now()
  try {
    await step("git clone + PR checkout", async () => {
      await sh("git", ["clone", "--quiet", "--no-checkout", repo, dir])
      await sh("git", ["-C", dir, "fetch", "--quiet", repo, `refs/pull/${PR}/head`])
      await sh("git", ["-C", dir, "checkout", "--quiet", "FETCH_HEAD"])
    })
    await step("volume create", () => docker("volume", "create", "--label", `${BENCH_LABEL}=1`, volume))
    containerId = await step("create", () => docker("create", ...sandboxOptions(volume), image, ...CODE_SERVER_ARGS))
    await step("copy the workspace in (docker cp)", () => docker("cp", `${dir}/.`, `${containerId}:/workspace`))
    await step("start", () => docker("start", containerId))
    const remotePort = await step("port", async () => {
      const out = await docker("port", containerId, "8080/tcp")
      const port = Number(/^127\.0\.0\.1:(\d+)$/m.exec(out)?.[1])
      if (!Number.isInteger(port)) throw new Error(`docker port: ${out}`)
      return port
    })
    const localPort = await freePort()
    await step("ssh -L + health wait", async () => {
      forward = spawn(
        "/usr/bin/ssh",
        [
          "-F",
          ssh.config,
          "-N",
          "-o",
          "ExitOnForwardFailure=yes",
          "-L",
          `127.0.0.1:${localPort}:127.0.0.1:${remotePort}`,
          "127.0.0.1"
        ],
        { stdio: "ignore" }
      )
      await pollHealth(localPort)
    })
    return { total: performance.now() - t0, steps }
  } finally {
    forward?.kill()
    if (containerId !== "") await docker("rm", "--force", "--volumes", containerId).catch(() => "")
    await docker("volume", "rm", "--force", volume).catch(() => "")
    await sh("rm", ["-rf", dir])
  }
}

// --- prbox's side: `prbox open` with config.json naming the remote -------------

const prboxSetup = (root: string, remote: RemoteEngine, image: string) => {
  const home = join(root, "home")
  mkdirSync(home, { mode: 0o700 })
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ runtime: { docker: { host: remote.address } }, image, labels: { [BENCH_LABEL]: "1" } })
  )
  // The user's key and known_hosts where prbox looks for them (~/.ssh), as the CLI tests make them.
  const user = join(root, "user")
  const ssh = join(user, ".ssh")
  mkdirSync(ssh, { recursive: true, mode: 0o700 })
  copyFileSync(remote.identityFile, join(ssh, "id_ed25519"))
  chmodSync(join(ssh, "id_ed25519"), 0o600)
  copyFileSync(remote.knownHostsFile, join(ssh, "known_hosts"))
  const env = {
    ...process.env,
    HOME: user,
    PRBOX_HOME: home,
    SSH_AUTH_SOCK: "",
    DOCKER_HOST: "",
    DOCKER_CONTEXT: "",
    DOCKER_CONFIG: join(user, ".docker")
  }
  const prbox = (...args: ReadonlyArray<string>) => runProcess(process.execPath, [CLI_MAIN, ...args], env)
  return { prbox }
}

/** `prbox open` until it exits 0 (it exits once the sandbox runs and answers), then `prbox rm`. */
const prboxOpen = async (prbox: ReturnType<typeof prboxSetup>["prbox"], repo: string): Promise<number> => {
  const t0 = performance.now()
  const opened = await prbox("open", repo, "--pr", String(PR), "--json")
  const elapsed = performance.now() - t0
  const id = (() => {
    try {
      return String((JSON.parse(opened.stdout) as { readonly id?: unknown }).id ?? "")
    } catch {
      return ""
    }
  })()
  if (opened.code !== 0) {
    if (id !== "") await prbox("rm", "--force", id)
    throw new Error(`prbox open exited ${opened.code}: ${(opened.stderr || opened.stdout).trim().slice(-500)}`)
  }
  const removed = await prbox("rm", "--force", id)
  if (removed.code !== 0) throw new Error(`prbox rm ${id}: ${removed.stderr.trim()}`)
  return elapsed
}

export const runRemote = async (options: RemoteOptions): Promise<void> => {
  if (options.rounds < 1) throw new Error("--rounds must be at least 1")
  const facts = machineFacts()
  const { tag, label } = await resolveImage(options.image)
  const repo = await benchRepo(DEFAULT_REPO, log)
  const root = makeRoot("remote")
  const scope = await Effect.runPromise(Scope.make())
  const prboxRuns: Array<number> = []
  const rawRuns: Array<RawSteps> = []
  let prboxRefused: string | undefined
  let prbox: ReturnType<typeof prboxSetup>["prbox"] | undefined
  try {
    log("starting the remote engine ...")
    // Labelled as the run's: cleanupRoot removes it on Ctrl-C too.
    const remote = await Effect.runPromise(
      startRemoteEngine({ [BENCH_LABEL]: "1", "dev.prbox.home": root }).pipe(Scope.provide(scope))
    )
    log(`copying ${tag} to it (once, outside the timings) ...`)
    await Effect.runPromise(remote.loadImage(tag))
    const ssh = sshSetup(root, remote)
    prbox = prboxSetup(root, remote, tag).prbox
    // Round 0 warms both (prbox's daemon, mirror and image check; ssh and the page cache) and is not counted.
    for (let round = 0; round <= options.rounds; round++) {
      const timePrbox = async () => {
        if (prboxRefused !== undefined || prbox === undefined) return
        try {
          const elapsed = await prboxOpen(prbox, repo.path)
          if (round > 0) prboxRuns.push(elapsed)
          log(`round ${round}: prbox ${ms(elapsed)}`)
        } catch (error) {
          prboxRefused = error instanceof Error ? error.message : String(error)
          log(`prbox cannot open on the remote engine: ${prboxRefused}`)
        }
      }
      const timeRaw = async () => {
        const raw = await rawOpen(root, round, repo.path, tag, remote, ssh)
        if (round > 0) rawRuns.push(raw)
        log(`round ${round}: raw ${ms(raw.total)}`)
      }
      // Alternate who goes first, so neither always meets the other's leftovers.
      if (round % 2 === 0) {
        await timePrbox()
        await timeRaw()
      } else {
        await timeRaw()
        await timePrbox()
      }
    }
  } finally {
    if (prbox !== undefined) await prbox("daemon", "stop")
    await Effect.runPromise(Scope.close(scope, Exit.void))
    cleanupRoot(root)
  }
  const rawMs = median(rawRuns.map((run) => run.total))
  const prboxMs = prboxRefused === undefined ? median(prboxRuns) : Number.NaN
  const ratio = prboxMs / rawMs
  const stepNames = Object.keys(rawRuns[0]?.steps ?? {})
  const rawSteps = Object.fromEntries(
    stepNames.map((name) => [name, round(median(rawRuns.map((run) => run.steps[name] ?? Number.NaN)))])
  )
  process.stdout.write(
    `${describeMachine(facts)}\nimage: ${tag} (${label}); repository: ${repo.path}\n\n${table(
      ["open on the remote engine", "median", "target"],
      [
        ["raw (docker --host ssh://, ssh -L)", ms(rawMs), ""],
        ["prbox open", prboxRefused === undefined ? ms(prboxMs) : "refused", ""],
        [
          "ratio",
          Number.isNaN(ratio) ? "—" : `${ratio.toFixed(2)}x`,
          `≤ ${TARGET_RATIO}x ${Number.isNaN(ratio) ? "" : check(ratio <= TARGET_RATIO)}`
        ]
      ]
    )}\n\n${table(
      ["raw step", "median"],
      stepNames.map((name) => [name, ms(rawSteps[name] ?? Number.NaN)])
    )}\n${prboxRefused === undefined ? "" : `\nprbox: ${prboxRefused}\n`}`
  )
  const file = writeResult("remote", {
    machine: facts,
    image: tag,
    rounds: options.rounds,
    prbox:
      prboxRefused === undefined
        ? { medianMs: round(prboxMs), runs: prboxRuns.map((run) => round(run)) }
        : { refused: prboxRefused },
    raw: { medianMs: round(rawMs), steps: rawSteps, runs: rawRuns.map((run) => round(run.total)) },
    ratio: Number.isNaN(ratio) ? null : round(ratio, 2),
    target: TARGET_RATIO,
    met: Number.isNaN(ratio) ? null : ratio <= TARGET_RATIO
  })
  process.stdout.write(`\nwritten to ${file}\n`)
}
