import { Agent } from "node:http"
import type { Duplex } from "node:stream"
import { Effect, type Scope } from "effect"
import type ssh2 from "ssh2"
import {
  ConnectionRefused,
  type DockerEngineError,
  type EngineAuthFailed,
  type EngineHostUntrusted,
  EngineUnavailable,
  type PortInUse
} from "../DockerError.ts"
import { classify } from "./EngineCall.ts"
import {
  addressLabel,
  makeSshConnection,
  parseSshAddress,
  type SshAddress,
  type SshConnectionOptions,
  SshRefusal
} from "./SshConnection.ts"
import { listenForward } from "./SshForward.ts"

/**
 * Docker over SSH, as the docker CLI does it: every HTTP connection to the
 * engine is a channel running `docker system dial-stdio` on the remote host,
 * all on ONE SSH connection (SshConnection.ts), at most `maxChannels` at once
 * (more wait), kept open between requests (HTTP keep-alive: starting
 * dial-stdio costs the remote a process). Port forwards ride the same
 * connection.
 */

export interface SshTransportOptions extends Omit<SshConnectionOptions, "address"> {
  /** `ssh://user@host[:port]`. */
  readonly address: string
  /** Most `dial-stdio` channels open at once (sshd's MaxSessions is 10 by default). Default 8. */
  readonly maxChannels?: number | undefined
}

export interface SshTransportStats {
  /** Connections made so far (more than one only after a drop). */
  readonly connections: number
  readonly openChannels: number
  /** `dial-stdio` channels opened so far. */
  readonly openedChannels: number
  /** The most `dial-stdio` channels that were ever open at once. */
  readonly peakChannels: number
}

/** A dial through the SSH server failed: nothing listens there, or the server could not be used. */
export type DialError =
  | ConnectionRefused
  | EngineUnavailable
  | EngineAuthFailed
  | EngineHostUntrusted
  | DockerEngineError

export interface PortForward {
  /** The port on this machine's 127.0.0.1. */
  readonly localPort: number
}

export interface SshTransport {
  readonly address: SshAddress
  /** For dockerode (`agent`): its sockets are `dial-stdio` channels. */
  readonly agent: Agent
  /**
   * Listens on this machine's 127.0.0.1 (`localPort`, or a free port) until
   * the scope closes; each connection is carried to `remoteHost:remotePort`
   * as seen from the SSH server, over the connection of the moment.
   */
  readonly forwardPort: (request: {
    readonly remoteHost: string
    readonly remotePort: number
    readonly localPort?: number | undefined
  }) => Effect.Effect<PortForward, EngineUnavailable | PortInUse, Scope.Scope>
  /**
   * One connection to `remoteHost:remotePort` as seen from the SSH server, a
   * channel of the connection of the moment; the caller owns (destroys) it.
   * ConnectionRefused when nothing listens there.
   */
  readonly dial: (request: {
    readonly remoteHost: string
    readonly remotePort: number
  }) => Effect.Effect<Duplex, DialError>
  readonly stats: () => SshTransportStats
  /**
   * Completes when the connection of the moment has closed (at once when
   * there is none). A request sent before the drop is noticed may fail with
   * it; the first one after makes a new connection.
   */
  readonly disconnected: () => Effect.Effect<void>
}

const DIAL_STDIO = "docker system dial-stdio"
/** SSH's reason for a forward the server could not connect (RFC 4254 5.1): nothing listens there. */
const CONNECT_FAILED = 2

/** node:http's client calls these socket methods; a channel has no TCP options to set. */
const asSocket = (channel: ssh2.ClientChannel): Duplex => {
  const socket = channel as ssh2.ClientChannel & Record<string, unknown>
  for (const method of ["setKeepAlive", "setNoDelay", "setTimeout", "ref", "unref"]) {
    socket[method] ??= () => socket
  }
  return channel
}

/** A waiting line for at most `limit` holders. */
const permits = (limit: number) => {
  let held = 0
  const waiting: Array<() => void> = []
  return {
    held: () => held,
    waiting: () => waiting.length,
    acquire: (): Promise<void> => {
      if (held < limit) {
        held += 1
        return Promise.resolve()
      }
      return new Promise((resolve) => waiting.push(resolve))
    },
    release: (): void => {
      const next = waiting.shift()
      if (next === undefined) held -= 1
      else next()
    }
  }
}

const makeTransport = (options: SshTransportOptions, address: SshAddress) => {
  const label = addressLabel(address)
  const connection = makeSshConnection({ ...options, address })
  const maxChannels = options.maxChannels ?? 8
  const channels = permits(maxChannels)
  let peakChannels = 0
  let openedChannels = 0

  /**
   * Opens a channel with `open` on the connection of the moment; a connection
   * that turns out dead (the open fails before anything was sent) is dropped
   * and the open tried once more on a new one.
   */
  const onConnection = async (
    open: (client: ssh2.Client, done: (error: Error | undefined, channel: ssh2.ClientChannel) => void) => void
  ): Promise<ssh2.ClientChannel> => {
    for (let attempt = 1; ; attempt++) {
      const client = await connection.client()
      try {
        const channel = await new Promise<ssh2.ClientChannel>((resolve, reject) =>
          open(client, (error, opened) => (error === undefined ? resolve(opened) : reject(error)))
        )
        // ssh2 leaves a channel open when its connection drops: an idle keep-alive one would be reused, dead.
        const closeChannel = () => (channel as Duplex).destroy()
        client.once("close", closeChannel)
        channel.once("close", () => client.off("close", closeChannel))
        return channel
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        // The server refusing one channel (a forward to a closed port) leaves the connection as it is.
        if ((error as { readonly reason?: unknown }).reason === CONNECT_FAILED) {
          throw new SshRefusal("refused", `${label}: ${message}`)
        }
        const deadConnection = /^(Not connected|No response from server)/.test(message)
        if (!deadConnection || attempt >= 2) throw new SshRefusal("unreachable", `${label}: ${message}`)
        connection.drop(client)
      }
    }
  }

  const agent = new Agent({ keepAlive: true, maxSockets: maxChannels, maxFreeSockets: maxChannels })
  /**
   * A channel an upgraded request took (an exec's stream) leaves the agent's
   * count but holds its place here, so the agent may ask for a channel that
   * has to wait. A channel the agent would then keep idle is closed instead,
   * to make room: otherwise the waiting one waits for the stream to end.
   */
  const idleChannels = () => Object.values(agent.freeSockets).flatMap((sockets) => sockets ?? [])
  // After the agent's own listener: a channel it handed to a queued request is busy, not idle.
  agent.on("free", (socket: Duplex) => {
    if (channels.waiting() > 0 && idleChannels().includes(socket as never)) socket.destroy()
  })

  const dialStdio = async (): Promise<Duplex> => {
    await channels.acquire()
    let channel: ssh2.ClientChannel
    try {
      channel = await onConnection((client, done) =>
        client.exec(DIAL_STDIO, (error, opened) => done(error ?? undefined, opened))
      )
    } catch (error) {
      channels.release()
      throw error
    }
    openedChannels += 1
    peakChannels = Math.max(peakChannels, channels.held())
    let stderr = ""
    channel.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-2000)
    })
    // A remote without docker, or a user who may not use its socket: say so rather than "socket hang up".
    channel.on("exit", (code: number | null) => {
      if (code !== 0 && code !== null) {
        const why = stderr.trim() === "" ? `exit ${code}` : stderr.trim()
        ;(channel as Duplex).destroy(new SshRefusal("unreachable", `${label}: \`${DIAL_STDIO}\` failed: ${why}`))
      }
    })
    channel.once("close", () => channels.release())
    return asSocket(channel)
  }

  const createConnection = (_options: unknown, callback: (error: Error | null, socket?: Duplex) => void) => {
    dialStdio().then(
      (socket) => callback(null, socket),
      (error: Error) => callback(error)
    )
    return undefined
  }
  Object.assign(agent, { createConnection })

  const openForward = (remoteHost: string, remotePort: number) =>
    onConnection((client, done) =>
      client.forwardOut("127.0.0.1", 0, remoteHost, remotePort, (error, opened) => done(error ?? undefined, opened))
    )

  const forwardPort: SshTransport["forwardPort"] = ({ remoteHost, remotePort, localPort }) =>
    listenForward(() => openForward(remoteHost, remotePort), localPort)

  const dial: SshTransport["dial"] = ({ remoteHost, remotePort }) =>
    Effect.callback<Duplex, DialError>((resume) => {
      let wanted = true
      openForward(remoteHost, remotePort).then(
        (channel) => {
          // Opened after the caller gave up: nobody else would close it.
          if (wanted) resume(Effect.succeed(asSocket(channel)))
          else channel.destroy()
        },
        (error: unknown) =>
          resume(
            Effect.fail(
              error instanceof SshRefusal && error.kind === "refused"
                ? new ConnectionRefused({ operation: "engine.dial", detail: error.message })
                : classify("engine.dial", {})(error)
            )
          )
      )
      return Effect.sync(() => {
        wanted = false
      })
    })

  const transport: SshTransport = {
    address,
    agent,
    forwardPort,
    dial,
    stats: () => ({
      connections: connection.connections(),
      openChannels: channels.held(),
      openedChannels,
      peakChannels
    }),
    disconnected: () =>
      Effect.callback<void>((resume) => {
        connection.closed().then(() => resume(Effect.void))
      })
  }
  const close = () => {
    agent.destroy()
    connection.close()
  }
  return { transport, close }
}

/** The transport to `options.address`, closed (connection and all) with the scope. */
export const make = Effect.fn("SshTransport.make")(function* (options: SshTransportOptions) {
  const address = parseSshAddress(options.address)
  if (address === undefined) {
    return yield* new EngineUnavailable({
      operation: "engine.connect",
      detail: `${options.address} is not an SSH engine address (ssh://user@host[:port], no password)`
    })
  }
  const { transport } = yield* Effect.acquireRelease(
    Effect.sync(() => makeTransport(options, address)),
    ({ close }) => Effect.sync(close)
  )
  return transport
})
