import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { outputOf, type Run } from "./support.ts"

/**
 * Runs the system's OpenSSH tools (ssh, sftp, scp) with prbox's config
 * (`-F`) and an empty HOME, so nothing of the machine's own ~/.ssh applies.
 */
export const sshHome = (): string => mkdtempSync(join(tmpdir(), "prbox-ssh-home-"))

export const runTool = (
  tool: string,
  args: ReadonlyArray<string>,
  options: { readonly home: string; readonly input?: string | Buffer; readonly env?: Record<string, string> }
): Promise<Run> => {
  const child = spawn(tool, [...args], {
    env: { ...process.env, HOME: options.home, ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  child.stdin.on("error", () => {})
  child.stdin.end(options.input ?? "")
  return outputOf(child)
}

/** A TCP port on 127.0.0.1 nothing listens on now. */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

/** The listening TCP sockets `ss -ltnH` shows, as sorted "address:port" lines. */
export const listeners = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .map((line) => line.trim().split(/\s+/)[3] ?? "")
    .filter((address) => address !== "")
    .sort()
