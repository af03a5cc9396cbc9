import { lstatSync, unlinkSync } from "node:fs"
import type { Server } from "node:http"
import { connect } from "node:net"
import { InsecureFiles, modeOf } from "./Files.ts"
import { AlreadyRunning } from "./Lock.ts"

export type SocketState = "absent" | "live" | "stale"

const code = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : undefined

/** Whether something answers on the socket file: a refused connect means a dead daemon left it. */
export const probeSocket = (path: string, timeoutMs = 2000): Promise<SocketState> =>
  new Promise((resolve, reject) => {
    try {
      if (!lstatSync(path).isSocket()) {
        reject(new InsecureFiles({ path, detail: "exists and is not a socket; remove it" }))
        return
      }
    } catch (cause) {
      if (code(cause) === "ENOENT") resolve("absent")
      else reject(new InsecureFiles({ path, detail: `stat failed (${code(cause) ?? String(cause)})` }))
      return
    }
    const socket = connect(path)
    // A daemon too busy to accept within the timeout is still a live one.
    const timer = setTimeout(() => done("live"), timeoutMs)
    const done = (state: SocketState) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(state)
    }
    socket.once("connect", () => done("live"))
    socket.once("error", (error) => {
      const why = code(error)
      if (why === "ECONNREFUSED" || why === "ENOENT") done(why === "ENOENT" ? "absent" : "stale")
      else {
        clearTimeout(timer)
        reject(new InsecureFiles({ path, detail: `cannot probe the socket (${why ?? String(error)})` }))
      }
    })
  })

/** Replaces a stale socket file; refuses when a live process answers on it. */
export const clearStaleSocket = async (path: string): Promise<SocketState> => {
  const state = await probeSocket(path)
  if (state === "live") throw new AlreadyRunning({ pid: null, detail: `something answers on ${path}` })
  if (state === "stale") unlinkSync(path)
  return state
}

/**
 * Listens on `path` with the socket created 0600: the umask is tightened
 * around the synchronous bind (not a chmod after it, which would leave a
 * window), then the mode is verified.
 */
export const listenPrivately = (server: Server, path: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error)
    server.once("error", onError)
    const previous = process.umask(0o177)
    try {
      server.listen({ path, exclusive: true }, () => {
        server.off("error", onError)
        const mode = modeOf(path)
        if (mode !== 0o600) {
          server.close()
          reject(new InsecureFiles({ path, detail: `socket mode is ${mode.toString(8)}, not 600` }))
        } else resolve()
      })
    } finally {
      process.umask(previous)
    }
  })
