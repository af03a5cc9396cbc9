import { randomBytes } from "node:crypto"
import { closeSync, constants, openSync, rmSync } from "node:fs"
import { connect, createServer, type Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { ClientHome } from "@prbox/client/Home"
import { statePaths } from "@prbox/domain/StatePaths"

// No effect here: the fast path (QuickAnswer.ts) runs it, as does the full CLI.

const MAX_HEAD = 64 * 1024
/** How long the sandbox's server may take to dial in once the daemon said it did. */
const DIAL_TIMEOUT_MS = 10_000

/** How a proxy ended: the connection was served and ended, the daemon could not be reached (nothing sent), or it refused. */
export type ProxyEnd =
  | { readonly _tag: "Ended" }
  | { readonly _tag: "Unreachable"; readonly message: string }
  | { readonly _tag: "Refused"; readonly message: string }

interface ServerSocket {
  readonly name: string
  /** The one connection dialled in, or undefined when none came within `timeoutMs`. */
  readonly accepted: (timeoutMs: number) => Promise<Socket | undefined>
  readonly close: () => void
}

/**
 * Listens at a new socket in the sandbox's folder of sockets (read-only in
 * its container) for the one connection its SSH server dials: the bytes
 * then go from here to the server, not through prboxd and the engine.
 * Bound through a handle on the folder (`/proc/self/fd/<n>/<name>`): the
 * address the container sees in its /proc/net/unix names no host path, and
 * no `$PRBOX_HOME` is too long for a socket. 0666: the container's user,
 * whoever it is, dials it; no other host user reaches `$PRBOX_HOME`.
 * Undefined when there is no such folder (a sandbox of the old layout).
 */
const listenForServer = (folder: string): Promise<ServerSocket | undefined> =>
  new Promise((resolve) => {
    let handle: number | undefined
    try {
      handle = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY)
    } catch {
      return resolve(undefined)
    }
    const release = () => {
      if (handle !== undefined) closeSync(handle)
      handle = undefined
    }
    const name = `${randomBytes(12).toString("hex")}.sock`
    const path = `${folder}/${name}`
    let first: Socket | undefined
    let waiting: ((socket: Socket) => void) | undefined
    const stop = () => {
      server.close()
      rmSync(path, { force: true })
    }
    const server = createServer({ pauseOnConnect: true }, (socket) => {
      if (first !== undefined) return void socket.destroy()
      first = socket
      stop()
      waiting?.(socket)
    })
    const failed = () => {
      release()
      resolve(undefined)
    }
    server.once("error", failed)
    // 0666 from the start (the bind is synchronous): no chmod by path afterwards.
    const umask = process.umask(0o111)
    try {
      server.listen(`/proc/self/fd/${handle}/${name}`, () => {
        server.removeListener("error", failed)
        release()
        const accepted = (timeoutMs: number) =>
          new Promise<Socket | undefined>((done) => {
            if (first !== undefined) return done(first)
            const timer = setTimeout(() => done(undefined), timeoutMs)
            waiting = (socket) => {
              clearTimeout(timer)
              done(socket)
            }
          })
        resolve({
          name,
          accepted,
          close: () => {
            stop()
            first?.destroy()
          }
        })
      })
    } finally {
      process.umask(umask)
    }
  })

/** The upgrade's answer: its status line, the transport it names, and the bytes after its head. */
const parseHead = (head: Buffer, end: number) => {
  const lines = head.subarray(0, end).toString("latin1").split("\r\n")
  const transport = lines
    .find((line) => line.toLowerCase().startsWith("prbox-ssh-transport:"))
    ?.slice("prbox-ssh-transport:".length)
    .trim()
  return { status: lines[0] ?? "", transport, rest: head.subarray(end + 4) }
}

/**
 * `prbox ssh-proxy`: asks the daemon's socket for sandbox `id`'s SSH server
 * (an HTTP upgrade) and joins it to this process's stdin and stdout, the way
 * OpenSSH runs a ProxyCommand: through the socket the server dials in the
 * sandbox's folder of sockets, else through the daemon. A
 * refusal (no such sandbox, not running) is the daemon's message, before any
 * SSH byte.
 */
export const proxy = ({ home, socketPath }: ClientHome, id: string): Promise<ProxyEnd> =>
  new Promise((resolve) => {
    const folder = statePaths(home).sandbox(id).sockets
    const daemon = connect(socketPath)
    let dial: ServerSocket | undefined
    let reached = false
    let joined = false
    let settled = false
    // OpenSSH hangs up its ProxyCommand as it exits: the socket goes too, then the signal does what it does.
    const hangUp = (signal: NodeJS.Signals) => {
      dial?.close()
      process.kill(process.pid, signal)
    }
    const signals = ["SIGHUP", "SIGINT", "SIGTERM"] as const
    for (const signal of signals) process.once(signal, hangUp)
    const end = (result: ProxyEnd) => {
      if (settled) return
      settled = true
      for (const signal of signals) process.removeListener(signal, hangUp)
      dial?.close()
      daemon.destroy()
      resolve(result)
    }
    // Until the bytes flow, a daemon that goes (a restart) ends this too.
    daemon.once("close", () => {
      if (!joined) end({ _tag: "Refused", message: "prboxd closed the connection" })
    })
    daemon.on("error", (error) =>
      end(
        reached
          ? { _tag: "Refused", message: `prboxd's connection failed: ${error.message}` }
          : { _tag: "Unreachable", message: `cannot reach prboxd at ${socketPath}: ${error.message}` }
      )
    )
    /** Joins `stream` and this process's stdin and stdout until it closes. */
    const join = (stream: Duplex, early: Buffer) => {
      joined = true
      stream.on("error", () => stream.destroy())
      if (early.length > 0) process.stdout.write(early)
      stream.pipe(process.stdout)
      process.stdin.pipe(stream)
      stream.once("close", () => {
        process.stdin.unpipe(stream)
        process.stdin.destroy()
        end({ _tag: "Ended" })
      })
    }
    let head = Buffer.alloc(0)
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk])
      const at = head.indexOf("\r\n\r\n")
      if (at < 0) {
        if (head.length > MAX_HEAD) end({ _tag: "Refused", message: "prboxd's answer is too long" })
        return
      }
      daemon.removeListener("data", onHead)
      const { status, transport, rest } = parseHead(head, at)
      if (!/^HTTP\/1\.1 101 /.test(status)) return refused(status, at)
      if (transport !== "socket") {
        // Through the daemon (a container without the folder): nothing is to dial here.
        dial?.close()
        dial = undefined
        return join(daemon, rest)
      }
      if (dial === undefined) return end({ _tag: "Refused", message: "prboxd answered on a socket it was not given" })
      // The daemon holds the server while this connection is open: either end ends both.
      daemon.resume()
      void dial.accepted(DIAL_TIMEOUT_MS).then((server) => {
        if (server === undefined) return end({ _tag: "Refused", message: "the sandbox's SSH server did not dial in" })
        join(server, Buffer.alloc(0))
        daemon.once("close", () => server.destroy())
      })
    }
    /** The daemon's error (an API error body), once it ends the connection. */
    const refused = (status: string, at: number) => {
      daemon.on("data", (more: Buffer) => {
        head = Buffer.concat([head, more]).subarray(0, MAX_HEAD)
      })
      daemon.on("end", () => {
        let message = status
        try {
          message = (JSON.parse(head.subarray(at + 4).toString("utf8")) as { message?: string }).message ?? status
        } catch {
          // Not an API error body: the status line says what there is.
        }
        end({ _tag: "Refused", message })
      })
    }
    daemon.once("connect", () => {
      reached = true
      void (folder === undefined ? Promise.resolve(undefined) : listenForServer(folder)).then((server) => {
        if (settled) return server?.close()
        dial = server
        const query = server === undefined ? "" : `?socket=${server.name}`
        daemon.on("data", onHead)
        daemon.write(
          `POST /v1/sandboxes/${id}/ssh${query} HTTP/1.1\r\nHost: prboxd\r\nConnection: Upgrade\r\nUpgrade: prbox-ssh\r\nContent-Length: 0\r\n\r\n`
        )
      })
    })
  })
