// `pnpm bench <name> [options]`: runs one benchmark, prints its tables and
// writes bench-results/<name>.json. `pnpm bench` lists them.
import { type ParseArgsConfig, parseArgs } from "node:util"
import { BenchStopped, cleanupAllRoots } from "./bench/common.ts"

interface Benchmark {
  readonly summary: string
  readonly usage: string
  readonly run: (args: ReadonlyArray<string>) => Promise<void>
}

const intOption = (value: string | undefined, fallback: number, name: string): number => {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isInteger(n)) throw new UsageError(`--${name} must be a whole number`)
  return n
}

class UsageError extends Error {}

const daemonOption = (value: unknown): "package" | "sources" => {
  if (value === undefined || value === "package" || value === "sources") return value ?? "package"
  throw new UsageError("--daemon must be package or sources")
}

const parse = (args: ReadonlyArray<string>, options: ParseArgsConfig["options"]) => {
  try {
    return parseArgs({ args: [...args], options: options ?? {}, strict: true, allowPositionals: false }).values
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error))
  }
}

const benchmarks: Readonly<Record<string, Benchmark>> = {
  open: {
    summary: "raw vs prbox: cold open, warm open, re-open, restart (median of runs)",
    usage: "open [--image code-server (default)|healthz|<tag>] [--runs N (default 7)]",
    run: async (args) => {
      const values = parse(args, { image: { type: "string" }, runs: { type: "string" } })
      const { runOpen } = await import("./bench/open.ts")
      await runOpen({
        image: typeof values.image === "string" ? values.image : "code-server",
        runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 7, "runs")
      })
    }
  },
  warm: {
    summary:
      "the installed package's prbox open of a further PR (real code-server): pool hit, pool miss, prebuilt (updateContentCommand skipped by its stamp), p50/p95 vs the raw warm steps in the same run; daemon idle RSS with a pool of 2",
    usage:
      "warm [--runs N (default 10)] [--repo <bare repository with refs/pull/N/head> (default: the generated stand-in)]",
    run: async (args) => {
      const values = parse(args, { runs: { type: "string" }, repo: { type: "string" } })
      const { runWarm } = await import("./bench/warm.ts")
      await runWarm({
        runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 10, "runs"),
        repo: typeof values.repo === "string" ? values.repo : undefined
      })
    }
  },
  api: {
    summary:
      "prboxd listing 200 sandboxes for clients in a separate process: closed loop (50 clients) and open loop " +
      "(200 and 1000 req/s), p50/p99, the daemon's own time per request, daemon RSS",
    usage: "api [--clients N (default 50)] [--seconds N (default 10)] [--daemon package|sources (default package)]",
    run: async (args) => {
      const values = parse(args, {
        clients: { type: "string" },
        seconds: { type: "string" },
        daemon: { type: "string" }
      })
      const { runApi } = await import("./bench/api.ts")
      await runApi({
        clients: intOption(typeof values.clients === "string" ? values.clients : undefined, 50, "clients"),
        seconds: intOption(typeof values.seconds === "string" ? values.seconds : undefined, 10, "seconds"),
        rates: [200, 1_000],
        daemon: daemonOption(values.daemon)
      })
    }
  },
  devcontainer: {
    summary:
      "open of a repository whose devcontainer.json builds its image (or, --features, installs features from a registry on loopback; or, --compose, a Docker Compose app service built beside a redis service), cold and warm: prbox vs devcontainer up",
    usage: "devcontainer [--runs N (default 3)] [--features | --compose] [--spans (each prbox open's timeline)]",
    run: async (args) => {
      const values = parse(args, {
        runs: { type: "string" },
        features: { type: "boolean" },
        compose: { type: "boolean" },
        spans: { type: "boolean" }
      })
      const { runDevcontainer } = await import("./bench/devcontainer.ts")
      await runDevcontainer({
        runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 3, "runs"),
        features: values.features === true,
        compose: values.compose === true,
        spans: values.spans === true
      })
    }
  },
  ssh: {
    summary:
      "`ssh <id>.prbox true` on a shared connection vs `docker exec true`, sftp put/get vs `docker cp`, the first connection's time",
    usage: "ssh [--runs N (default 20)] [--megabytes N (default 50)]",
    run: async (args) => {
      const values = parse(args, { runs: { type: "string" }, megabytes: { type: "string" } })
      const { runSsh } = await import("./bench/ssh.ts")
      await runSsh({
        runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 20, "runs"),
        megabytes: intOption(typeof values.megabytes === "string" ? values.megabytes : undefined, 50, "megabytes")
      })
    }
  },
  preview: {
    summary:
      "requests/s and p99 through the preview vs directly to the app on the container's bridge IP, 50 connections",
    usage: "preview [--seconds N (default 10)] [--connections N (default 50)]",
    run: async (args) => {
      const values = parse(args, { seconds: { type: "string" }, connections: { type: "string" } })
      const { runPreview } = await import("./bench/preview.ts")
      await runPreview({
        seconds: intOption(typeof values.seconds === "string" ? values.seconds : undefined, 10, "seconds"),
        connections: intOption(
          typeof values.connections === "string" ? values.connections : undefined,
          50,
          "connections"
        )
      })
    }
  },
  mcp: {
    summary: 'round trip of sandbox_exec ["true"] through prbox mcp vs the same exec through the Docker Engine API',
    usage: "mcp [--seconds N (default 10)]",
    run: async (args) => {
      const values = parse(args, { seconds: { type: "string" } })
      const { runMcp } = await import("./bench/mcp.ts")
      await runMcp({
        seconds: intOption(typeof values.seconds === "string" ? values.seconds : undefined, 10, "seconds")
      })
    }
  },
  cli: {
    summary:
      "prbox ls / ls -a / status (installed from the tarball, 200 rows) vs docker ps: medians of alternating runs",
    usage: "cli [--runs N (default 20)] [--prbox PATH (measure this prbox instead of installing the tarball)]",
    run: async (args) => {
      const values = parse(args, { runs: { type: "string" }, prbox: { type: "string" } })
      const { runCli } = await import("./bench/cli.ts")
      await runCli({
        runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 20, "runs"),
        prbox: typeof values.prbox === "string" ? values.prbox : undefined
      })
    }
  },
  remote: {
    summary:
      "open on a remote engine over SSH: prbox open vs the raw steps by hand (docker --host ssh://, docker cp, ssh -L), medians of alternating rounds",
    usage: "remote [--image code-server (default)|healthz|<tag>] [--rounds N (default 5)]",
    run: async (args) => {
      const values = parse(args, { image: { type: "string" }, rounds: { type: "string" } })
      const { runRemote } = await import("./bench/remote.ts")
      await runRemote({
        image: typeof values.image === "string" ? values.image : "code-server",
        rounds: intOption(typeof values.rounds === "string" ? values.rounds : undefined, 5, "rounds")
      })
    }
  },
  reconcile: {
    summary: "full reconcile of 1,000 rows and 100 labelled containers",
    usage: "reconcile [--runs N (default 7)]",
    run: async (args) => {
      const values = parse(args, { runs: { type: "string" } })
      const { runReconcile } = await import("./bench/reconcile.ts")
      await runReconcile({ runs: intOption(typeof values.runs === "string" ? values.runs : undefined, 7, "runs") })
    }
  }
}

const list = (): string =>
  [
    "usage: pnpm bench <name> [options]",
    "",
    ...Object.entries(benchmarks).map(
      ([name, b]) => `  ${name.padEnd(10)} ${b.summary}\n  ${"".padEnd(10)} ${b.usage}`
    ),
    "",
    "Each prints a table and writes bench-results/<name>.json."
  ].join("\n")

const main = async (): Promise<number> => {
  const [name, ...rest] = process.argv.slice(2).filter((arg, index) => !(index === 0 && arg === "--"))
  if (name === undefined || name === "--help" || name === "-h") {
    process.stdout.write(`${list()}\n`)
    return 0
  }
  const benchmark = benchmarks[name]
  if (benchmark === undefined) {
    process.stderr.write(
      `bench: unknown benchmark "${name}"; known: ${Object.keys(benchmarks).join(", ")}\n\n${list()}\n`
    )
    return 2
  }
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      process.stderr.write(`bench: ${signal}, removing the run's containers\n`)
      cleanupAllRoots()
      process.exit(130)
    })
  }
  try {
    await benchmark.run(rest)
    return 0
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`bench ${name}: ${error.message}\n${benchmark.usage}\n`)
      return 2
    }
    const detail =
      error instanceof BenchStopped ? error.message : error instanceof Error ? (error.stack ?? error.message) : error
    process.stderr.write(`bench ${name} failed: ${String(detail)}\n`)
    cleanupAllRoots()
    return 1
  }
}

process.exitCode = await main()
