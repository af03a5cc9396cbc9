// `pnpm bench devcontainer`: opening a repository whose devcontainer.json
// builds its image, cold (the image built) and warm (the image reused), with
// prbox and with the reference tool, `devcontainer up` of @devcontainers/cli,
// on the same repository and Docker engine in one run.
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { DefaultImage } from "@prbox/engine/node"
import { testDistributionDir } from "../images/cache.ts"
import { imageExists } from "../images/images.ts"
import {
  cleanupRoot,
  describeMachine,
  log,
  machineFacts,
  makeRoot,
  median,
  ms,
  repoRoot,
  round,
  sh,
  table,
  writeResult
} from "./common.ts"
import { benchDatabase, removeComposePeer, writeComposeRepository } from "./devcontainer-compose.ts"
import { openFeatureRegistry, publishBenchFeatures } from "./devcontainer-features.ts"
import { BENCH_LABEL, makeEngine, type Recorder } from "./engine.ts"
import { openTimeline } from "./timeline.ts"

const PEER_LABEL = "dev.prbox.bench.peer"

const git = (cwd: string, ...args: ReadonlyArray<string>) =>
  execFileSync("git", ["-c", "user.email=bench@prbox", "-c", "user.name=bench", ...args], {
    cwd,
    encoding: "utf8"
  }).trim()

/**
 * The repository: a Dockerfile-based devcontainer.json whose build runs a
 * step and whose setup runs one command; with `features`, an image with
 * those features instead of the build.
 */
const writeRepository = (work: string, base: string, nonce: string, features?: Record<string, unknown>) => {
  mkdirSync(join(work, ".devcontainer"), { recursive: true })
  if (features !== undefined) {
    const json = {
      name: "bench",
      image: base,
      features,
      containerEnv: { APP_ENV: "bench" },
      postCreateCommand: "cat /opt/tool/level"
    }
    writeFileSync(join(work, ".devcontainer", "devcontainer.json"), `${JSON.stringify(json, null, 2)}\n`)
    writeFileSync(join(work, "README.md"), `bench ${nonce}\n`)
    return
  }
  writeFileSync(
    join(work, ".devcontainer", "Dockerfile"),
    `FROM ${base}\nARG GREETING=hello\nRUN echo "$GREETING ${nonce}" > /etc/greeting && mkdir -p /opt/tool && seq 1 20000 > /opt/tool/data\n`
  )
  writeFileSync(
    join(work, ".devcontainer", "devcontainer.json"),
    `${JSON.stringify(
      {
        name: "bench",
        build: { dockerfile: "Dockerfile", args: { GREETING: "hi" } },
        containerEnv: { APP_ENV: "bench" },
        postCreateCommand: "cat /etc/greeting"
      },
      null,
      2
    )}\n`
  )
  writeFileSync(join(work, "README.md"), `bench ${nonce}\n`)
}

/** One PR per nonce on a bare remote (`database`: the Compose scenario's, with that redis image). */
const pushPullRequest = (
  work: string,
  bare: string,
  pr: number,
  base: string,
  nonce: string,
  features?: Record<string, unknown>,
  database?: string
) => {
  if (database === undefined) writeRepository(work, base, nonce, features)
  else writeComposeRepository(work, base, database, nonce)
  git(work, "add", "-A")
  git(work, "commit", "--quiet", "--allow-empty", "-m", `pr ${pr}`)
  git(work, "push", "--quiet", bare, `HEAD:refs/pull/${pr}/head`)
}

const peerUp = async (cli: string, folder: string): Promise<number> => {
  const start = performance.now()
  await sh(process.execPath, [cli, "up", "--workspace-folder", folder, "--id-label", `${PEER_LABEL}=${folder}`])
  return performance.now() - start
}

const removePeer = (folder: string) => {
  const ids = execFileSync("docker", ["ps", "-aq", "--filter", `label=${PEER_LABEL}=${folder}`], { encoding: "utf8" })
    .split("\n")
    .filter((id) => id.length > 0)
  // A Compose project's other services and network carry only Compose's labels.
  removeComposePeer(ids)
  if (ids.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...ids], { stdio: "ignore" })
}

export const runDevcontainer = async (options: {
  readonly runs: number
  readonly features: boolean
  /** The Compose scenario (app built, redis beside it) instead of the Dockerfile one. */
  readonly compose?: boolean
  /** Print each prbox open's timeline (its slow calls and its log). */
  readonly spans: boolean
}) => {
  const cli = join(repoRoot, "node_modules", "@devcontainers", "cli", "devcontainer.js")
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run pnpm install`)
  const facts = machineFacts()
  // prbox's default image is the repository's base: no registry is needed.
  const base = DefaultImage.DEFAULT_IMAGE
  if (!imageExists(base)) throw new Error(`${base} is missing: run scripts/setup --with-test-images`)
  const root = makeRoot("devcontainer")
  const home = join(root, "home")
  const bare = join(root, "remote.git")
  const work = join(root, "work")
  mkdirSync(work, { recursive: true })
  git(root, "init", "--quiet", "--bare", bare)
  git(work, "init", "--quiet", "--initial-branch=main")
  const featureRegistry = options.features ? await openFeatureRegistry() : undefined
  const database = options.compose === true ? await benchDatabase() : undefined
  const recorder: Recorder = []
  const engine = await makeEngine({
    home,
    image: base,
    recorder,
    codeServerDir: testDistributionDir(),
    localRegistries: featureRegistry === undefined ? [] : [featureRegistry.registry.host]
  })
  const results: Array<{ readonly mode: "cold" | "warm"; readonly prbox: number; readonly peer: number }> = []
  try {
    for (let run = 0; run < options.runs; run++) {
      // Each tool gets its own PR (its own build step), so neither's cold build hits the other's layer cache.
      const pr = 2 * run + 1
      // New feature content per tool and run: neither's cold install meets a cache.
      const featuresFor = async (who: string) =>
        featureRegistry === undefined
          ? undefined
          : await publishBenchFeatures(featureRegistry.registry, root, `${who}-${Date.now()}-${run}`)
      pushPullRequest(work, bare, pr, base, `prbox-${Date.now()}-${run}`, await featuresFor("prbox"), database)
      pushPullRequest(work, bare, pr + 1, base, `peer-${Date.now()}-${run}`, await featuresFor("peer"), database)
      const peerFolder = join(root, `peer-${pr + 1}`)
      git(root, "clone", "--quiet", bare, peerFolder)
      git(peerFolder, "fetch", "--quiet", "origin", `refs/pull/${pr + 1}/head`)
      git(peerFolder, "checkout", "--quiet", "FETCH_HEAD")
      for (const mode of ["cold", "warm"] as const) {
        // Alternate who goes first, so neither always meets a cold page cache.
        const prboxFirst = (run + (mode === "warm" ? 1 : 0)) % 2 === 0
        const timeOpen = async () => {
          const from = recorder.length
          const startEpoch = Date.now()
          const start = performance.now()
          const opened = await engine.run(engine.sandboxes.open({ input: bare, pr }))
          await engine.run(engine.sandboxes.awaitIdle(opened.id))
          const row = await engine.run(engine.sandboxes.get(opened.id))
          if (row.status !== "running") throw new Error(`prbox: ${row.status}: ${row.error ?? ""}`)
          const elapsed = performance.now() - start
          if (options.spans) {
            const events = await engine.run(engine.repo.readLog(opened.id, { limit: 1000 }))
            log(`prbox ${mode} open, run ${run + 1}:\n${openTimeline(recorder, from, start, startEpoch, events)}`)
          }
          await engine.run(engine.sandboxes.delete(opened.id))
          return elapsed
        }
        const timePeer = async () => {
          const elapsed = await peerUp(cli, peerFolder)
          removePeer(peerFolder)
          return elapsed
        }
        const [prbox, peer] = prboxFirst
          ? [await timeOpen(), await timePeer()]
          : await (async () => {
              const p = await timePeer()
              return [await timeOpen(), p] as const
            })()
        log(`run ${run + 1}/${options.runs} ${mode}: prbox ${ms(prbox)}, devcontainer up ${ms(peer)}`)
        results.push({ mode, prbox, peer })
      }
    }
  } finally {
    await engine.dispose()
    await featureRegistry?.close()
    cleanupRoot(root)
  }
  const summary = (["cold", "warm"] as const).map((mode) => {
    const rows = results.filter((r) => r.mode === mode)
    const prbox = median(rows.map((r) => r.prbox))
    const peer = median(rows.map((r) => r.peer))
    return { mode, prboxMs: round(prbox), peerMs: round(peer), ratio: round(prbox / peer, 2) }
  })
  process.stdout.write(
    `${describeMachine(facts)}\n\n${table(
      ["open", "prbox", "devcontainer up", "ratio"],
      summary.map((s) => [s.mode, ms(s.prboxMs), ms(s.peerMs), `${s.ratio.toFixed(2)}x`])
    )}\n`
  )
  const scenario = options.compose === true ? "compose" : options.features ? "features" : "dockerfile"
  const file = writeResult(scenario === "dockerfile" ? "devcontainer" : `devcontainer-${scenario}`, {
    machine: facts,
    scenario,
    runs: options.runs,
    summary,
    results,
    label: BENCH_LABEL
  })
  process.stdout.write(`\nwritten to ${file}\n`)
}
