import { fileURLToPath } from "node:url"
import {
  type ClientError,
  currentHome,
  ensureDaemon,
  Launch,
  NodePrboxClient,
  PrboxClient,
  type PrboxClientShape,
  requireDaemon
} from "@prbox/client"
import { Effect } from "effect"

/** This process's `$PRBOX_HOME`: its socket and the daemon's log. */
export const home = currentHome()

/**
 * The daemon's bundled entry, next to this module's chunk: defined by the
 * package's bundler (scripts/package/bundle.ts); undeclared when run from sources.
 */
declare const PRBOX_BUNDLED_DAEMON: string | undefined

/**
 * prboxd as the CLI starts it: the daemon's entry module run by this Node
 * with the daemon's flags. From sources it is found through the
 * `@prbox/daemon` package's `./main` export (a dependency of this package,
 * never a path into another app's files); in the installed package it is the
 * bundled daemon.
 */
export const launcher = Launch.node(
  fileURLToPath(
    typeof PRBOX_BUNDLED_DAEMON === "string"
      ? new URL(PRBOX_BUNDLED_DAEMON, import.meta.url)
      : import.meta.resolve("@prbox/daemon/main")
  )
)

export const notice = (line: string) => process.stderr.write(`prbox: ${line}\n`)

/** A client of this home's daemon (its HTTP agent lives as long as the effect). */
export const withClient = <A, E, R>(body: Effect.Effect<A, E, R | PrboxClient>) =>
  Effect.provide(body, NodePrboxClient.layer({ socketPath: home.socketPath }))

/** The running daemon, started (and said so on stderr) when none runs. */
export const ensureRunning = (announce: (line: string) => void = notice) => ensureDaemon(home, launcher, announce)

/** The body with a client of this home's daemon, which is started first when none runs. */
export const connected = <A, E>(body: (client: PrboxClientShape) => Effect.Effect<A, E>) =>
  withClient(
    Effect.gen(function* () {
      yield* ensureRunning()
      return yield* body(yield* PrboxClient)
    })
  )

/** The body with a client of a daemon that already runs (commands that report on the daemon never start it). */
export const running = <A, E>(body: (client: PrboxClientShape) => Effect.Effect<A, E | ClientError>) =>
  withClient(
    Effect.gen(function* () {
      yield* requireDaemon(home)
      return yield* body(yield* PrboxClient)
    })
  )
