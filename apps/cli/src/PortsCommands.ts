import { PORTS_HEADER, type PrboxClientShape, portChanges, portRows } from "@prbox/client"
import { isPreviewServiceName, portKey, type SandboxId } from "@prbox/domain"
import type { PortList } from "@prbox/protocol"
import { Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { connected } from "./Connect.ts"
import { printJson, runCommand, usageError } from "./Exit.ts"
import { table } from "./Format.ts"
import { idArgument, json, needsDaemon, out, resolveId } from "./Params.ts"

/** The commands about a sandbox's previews: its ports and their URLs, and the token scripts use. */

const WATCH_INTERVAL = "1 second"

/** A port of the sandbox: its own container's, or another Compose service's. */
export interface PortChoice {
  readonly port: number
  readonly service: string | undefined
}

/**
 * A `--public`/`--private` value: `<port>` (a whole number 1..65535), or
 * `<service>:<port>` for another Compose service's, checked before the daemon
 * is asked (which service the app reaches is the daemon's to say).
 */
export const parsePort = (flag: string, raw: string): Effect.Effect<PortChoice, ReturnType<typeof usageError>> => {
  const colon = raw.lastIndexOf(":")
  const service = colon < 0 ? undefined : raw.slice(0, colon)
  const text = raw.slice(colon + 1)
  const port = /^\d{1,5}$/.test(text) ? Number(text) : Number.NaN
  if (service !== undefined && !isPreviewServiceName(service)) {
    return Effect.fail(usageError(`--${flag}: "${service}" is not a service name a preview can reach`))
  }
  return port >= 1 && port <= 65535
    ? Effect.succeed({ port, service })
    : Effect.fail(usageError(`--${flag} needs a port number between 1 and 65535, not "${raw}"`))
}

const portFlag = (name: string, description: string) =>
  Flag.String(name).pipe(Flag.withDescription(description), Flag.withMetavar("[service:]port"), Flag.optional)

const sameChoice = (a: PortChoice | undefined, b: PortChoice | undefined): boolean =>
  a !== undefined && b !== undefined && a.port === b.port && a.service === b.service

export const portsTable = (list: PortList): string =>
  list.ports.length === 0
    ? `no ports declared or listening (previews are served on 127.0.0.1:${list.previewPort})`
    : table(PORTS_HEADER, portRows(list))

/** Polls every second; prints a line per port that starts or stops listening (--json: the list, when it changed). */
const watch = (client: PrboxClientShape, id: SandboxId, first: PortList, asJson: boolean) =>
  Effect.gen(function* () {
    let last = first
    while (true) {
      yield* Effect.sleep(WATCH_INTERVAL)
      const next = yield* client.ports(id)
      if (asJson) {
        if (JSON.stringify(next) !== JSON.stringify(last)) printJson(next)
      } else {
        for (const line of portChanges(last, next)) yield* out(`${new Date().toISOString().slice(11, 19)} ${line}`)
      }
      last = next
    }
  })

const ports = Command.make(
  "ports",
  {
    id: idArgument,
    json,
    watch: Flag.Boolean("watch").pipe(
      Flag.withAlias("w"),
      Flag.withDescription(
        "keep watching: a line when a port starts or stops listening (--json: the list on each change); Ctrl-C ends"
      ),
      Flag.withDefault(false)
    ),
    public: portFlag(
      "public",
      "open this port's preview to anyone on this machine, without auth, until the sandbox stops"
    ),
    private: portFlag("private", "close a public port again: it needs the password or the preview token")
  },
  (config) =>
    runCommand(
      config,
      Effect.gen(function* () {
        const open = Option.isSome(config.public) ? yield* parsePort("public", config.public.value) : undefined
        const close = Option.isSome(config.private) ? yield* parsePort("private", config.private.value) : undefined
        if (sameChoice(open, close)) {
          const both = portKey(open?.port ?? 0, open?.service)
          return yield* usageError(`--public ${both} and --private ${both} contradict each other`)
        }
        yield* connected((client) =>
          Effect.gen(function* () {
            const view = yield* resolveId(client, config.id)
            if (open !== undefined) yield* client.setPublic(view.id, open.port, true, open.service)
            if (close !== undefined) yield* client.setPublic(view.id, close.port, false, close.service)
            const list = yield* client.ports(view.id)
            if (config.json) printJson(list)
            else yield* out(portsTable(list))
            if (config.watch) yield* watch(client, view.id, list, config.json)
          })
        )
      })
    )
).pipe(
  Command.withDescription(
    [
      "List a running sandbox's ports with their preview URLs: those devcontainer.json (forwardPorts) or config.json (ports) declare, then those found listening inside it.",
      "A Docker Compose sandbox also lists its other services' ports (their ports/expose, forwardPorts' \"service:port\"), as <service>:<port>, reached from the app's container by the service's name: http://<port>.<service>.<id>.localhost:<previewPort>/.",
      "A preview is private: a browser logs in once with the sandbox's password (`prbox password`), a script sends `Authorization: Bearer $(prbox preview-token <id>)`.",
      "Where *.localhost does not resolve, use the path form http://localhost:<previewPort>/s/<id>/<port>/ (token or public port only)."
    ].join("\n  ")
  )
)

const previewToken = Command.make(
  "preview-token",
  { id: idArgument, json },
  needsDaemon((client, config) =>
    Effect.gen(function* () {
      const view = yield* resolveId(client, config.id)
      const token = yield* client.previewToken(view.id)
      if (config.json) return printJson(token)
      yield* out(token.token)
    })
  )
).pipe(
  Command.withDescription(
    "Print the token scripts send to a sandbox's previews: curl -H \"Authorization: Bearer $(prbox preview-token <id>)\" <url>. It is derived from the sandbox's password and lasts as long as the sandbox."
  )
)

export const portsCommands = [ports, previewToken] as const
