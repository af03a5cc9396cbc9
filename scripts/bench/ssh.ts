// `pnpm bench ssh`: `ssh <id>.prbox true` on a shared (ControlMaster)
// connection against `docker exec <container> true`, and sftp put/get of a
// file against `docker cp` in and out, on the same sandbox; the first
// connection's time reported beside them.
import { randomBytes } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { codeServerImage } from "../images/code-server.ts"
import { ensureImage } from "../images/images.ts"
import {
  check,
  cleanupRoot,
  describeMachine,
  httpRequest,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  repoRoot,
  round,
  sh,
  sleep,
  table,
  writeResult
} from "./common.ts"
import { type Daemon, daemonHome, spawnDaemon, waitForHealth } from "./daemon.ts"
import { benchRepo, DEFAULT_REPO } from "./repo.ts"

export interface SshOptions {
  readonly runs: number
  readonly megabytes: number
}

const TARGETS = { latencyRatio: 1.5, throughputRatio: 0.8 } as const
/** Transfers each way, of sftp and of docker cp: the medians are compared. */
const TRANSFERS = 3
const CLI_MAIN = join(repoRoot, "apps", "cli", "src", "main.ts")

/** Opens PR 1 of `remote` and waits until it runs; its id and container. */
const openSandbox = async (socketPath: string, remote: string) => {
  const call = async (method: string, path: string, body?: unknown) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers =
      payload === undefined
        ? {}
        : { "content-type": "application/json", "content-length": String(Buffer.byteLength(payload)) }
    const answer = await httpRequest({ socketPath, method, path, headers }, true, payload)
    return JSON.parse(answer.body) as { id: string; status: string; containerId: string | null; error: string | null }
  }
  const opened = await call("POST", "/v1/sandboxes", { input: remote, pr: 1 })
  for (let waited = 0; waited < 180_000; waited += 250) {
    const row = await call("GET", `/v1/sandboxes/${opened.id}`)
    if (row.status === "running" && row.containerId !== null) return { id: row.id, containerId: row.containerId }
    if (row.status === "error" || row.status === "stopped")
      throw new Error(`the sandbox ended ${row.status}: ${row.error}`)
    await sleep(250)
  }
  throw new Error("the sandbox did not run in time")
}

/** Milliseconds `file args` took (it must succeed). */
const timed = async (file: string, args: ReadonlyArray<string>): Promise<number> => {
  const started = performance.now()
  await sh(file, args)
  return performance.now() - started
}

const medianOf = async (runs: number, once: () => Promise<number>): Promise<number> => {
  const times: Array<number> = []
  for (let run = 0; run < runs; run++) times.push(await once())
  return median(times)
}

export const runSsh = async (options: SshOptions): Promise<void> => {
  const facts = machineFacts()
  const image = await ensureImage(codeServerImage)
  const repo = await benchRepo(DEFAULT_REPO, log)
  const root = makeRoot("ssh")
  const home = daemonHome(root, image)
  const socketPath = join(home, "run", "prboxd.sock")
  const file = join(root, "payload.bin")
  writeFileSync(file, randomBytes(options.megabytes * 1024 * 1024))
  let daemon: Daemon | undefined
  try {
    log("starting prboxd ...")
    daemon = spawnDaemon(home)
    await waitForHealth(socketPath, daemon)
    log(`opening PR 1 of ${repo.path} in ${image} ...`)
    const sandbox = await openSandbox(socketPath, repo.path)
    process.env.PRBOX_HOME = home
    await sh(process.execPath, [CLI_MAIN, "ssh-config"])
    const config = join(home, "ssh", "config")
    const host = `${sandbox.id}.prbox`
    const shared = [
      "-F",
      config,
      "-o",
      "ControlMaster=auto",
      "-o",
      `ControlPath=${join(root, "cm-%C")}`,
      "-o",
      "ControlPersist=120"
    ]
    const firstMs = await timed("ssh", [...shared, host, "true"])
    log(`first connection: ${ms(firstMs)}`)
    const sshMs = await medianOf(options.runs, () => timed("ssh", [...shared, host, "true"]))
    const execMs = await medianOf(options.runs, () => timed("docker", ["exec", sandbox.containerId, "true"]))
    const mb = options.megabytes
    const sftp = (command: string) =>
      timed("sh", ["-c", `echo '${command}' | sftp ${shared.map((word) => `'${word}'`).join(" ")} -b - ${host}`])
    // Each way TRANSFERS times, sftp and docker cp taking turns: a busy moment of the machine falls on both.
    const samples = {
      put: [] as Array<number>,
      get: [] as Array<number>,
      cpIn: [] as Array<number>,
      cpOut: [] as Array<number>
    }
    for (let round = 0; round < TRANSFERS; round++) {
      samples.put.push(await sftp(`put ${file} /tmp/payload.bin`))
      samples.cpIn.push(await timed("docker", ["cp", file, `${sandbox.containerId}:/tmp/payload-cp.bin`]))
      samples.get.push(await sftp(`get /tmp/payload.bin ${file}.back`))
      samples.cpOut.push(await timed("docker", ["cp", `${sandbox.containerId}:/tmp/payload-cp.bin`, `${file}.cp`]))
    }
    const putMs = median(samples.put)
    const getMs = median(samples.get)
    const cpInMs = median(samples.cpIn)
    const cpOutMs = median(samples.cpOut)
    await sh("ssh", [...shared, "-O", "exit", host]).catch(() => "")
    const rate = (millis: number) => mb / (millis / 1000)
    const latencyRatio = sshMs / execMs
    const throughputRatio = rate(putMs + getMs) / rate(cpInMs + cpOutMs)
    const out = ["", "prbox bench ssh", describeMachine(facts), ""]
    out.push(
      table(
        ["what", "ssh / sftp", "docker exec / cp"],
        [
          ["first connection (ssh true)", ms(firstMs), ""],
          [`true, median of ${options.runs}`, ms(sshMs), ms(execMs)],
          [`${mb} MB in, median of ${TRANSFERS}`, `${rate(putMs).toFixed(1)} MB/s`, `${rate(cpInMs).toFixed(1)} MB/s`],
          [`${mb} MB out, median of ${TRANSFERS}`, `${rate(getMs).toFixed(1)} MB/s`, `${rate(cpOutMs).toFixed(1)} MB/s`]
        ]
      ),
      "",
      table(
        ["ssh vs docker", "measured", "target", ""],
        [
          [
            "latency",
            `${latencyRatio.toFixed(2)}x`,
            `≤ ${TARGETS.latencyRatio}x`,
            check(latencyRatio <= TARGETS.latencyRatio)
          ],
          [
            "throughput",
            `${throughputRatio.toFixed(2)}x`,
            `≥ ${TARGETS.throughputRatio}x`,
            check(throughputRatio >= TARGETS.throughputRatio)
          ]
        ]
      )
    )
    const written = writeResult("ssh", {
      runs: options.runs,
      megabytes: mb,
      transfers: TRANSFERS,
      firstConnectionMs: round(firstMs),
      sshTrueMs: round(sshMs),
      dockerExecTrueMs: round(execMs),
      sftpPutMBps: round(rate(putMs)),
      sftpGetMBps: round(rate(getMs)),
      dockerCpInMBps: round(rate(cpInMs)),
      dockerCpOutMBps: round(rate(cpOutMs)),
      targets: {
        latencyRatio: {
          max: TARGETS.latencyRatio,
          measured: round(latencyRatio, 2),
          met: latencyRatio <= TARGETS.latencyRatio
        },
        throughputRatio: {
          min: TARGETS.throughputRatio,
          measured: round(throughputRatio, 2),
          met: throughputRatio >= TARGETS.throughputRatio
        }
      },
      image,
      machine: facts
    })
    out.push("", `wrote ${written}`)
    process.stdout.write(`${out.join("\n")}\n`)
  } finally {
    if (daemon !== undefined) await daemon.stop()
    cleanupRoot(root)
  }
}
