import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Duplex } from "node:stream"
import ssh2 from "ssh2"
import { afterAll, describe, expect, it } from "vitest"
import { bootstrapSource, sshServerBundle } from "../src/ssh/node/SshBundle.ts"
import { generateKey } from "../src/ssh/node/SshHostKeys.ts"

const folder = mkdtempSync(join(tmpdir(), "prbox-ssh-writes-"))
afterAll(() => rmSync(folder, { recursive: true, force: true }))

// Loaded before the server: counts its writes to stdout, reported on stderr as it exits.
const COUNTER = `let writes = 0
const write = process.stdout.write.bind(process.stdout)
process.stdout.write = (...args) => { writes++; return write(...args) }
process.on("exit", () => require("node:fs").writeSync(2, "writes=" + writes + "\\n"))
`

const MEGABYTES = 8

/**
 * prbox's SSH server (the bundle the sandboxes get) run by this machine's
 * Node with a pipe for stdout, as Docker gives it one; an ssh2 client runs
 * `dd` through it. What it wrote, how many writes that took and how many
 * data packets the client received.
 */
const serve = async () => {
  const counter = join(folder, "counter.cjs")
  writeFileSync(counter, COUNTER)
  const bundle = Buffer.from(await sshServerBundle())
  const hostKey = Buffer.from(generateKey(ssh2).private)
  const child = spawn(process.execPath, ["--require", counter, "-e", bootstrapSource()], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: folder }
  })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
  })
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()))
  child.stdin.write(`PRBOX-SSH/1 ${bundle.length} ${hostKey.length}\n`)
  child.stdin.write(bundle)
  child.stdin.write(hostKey)
  const sock = new Duplex({
    read() {
      child.stdout.resume()
    },
    write(chunk: Buffer, _encoding, done) {
      child.stdin.write(chunk, done)
    },
    final(done) {
      child.stdin.end(done)
    }
  })
  child.stdout.on("data", (chunk: Buffer) => {
    if (!sock.push(chunk)) child.stdout.pause()
  })
  child.stdout.on("end", () => sock.push(null))
  const client = new ssh2.Client()
  const received = await new Promise<{ bytes: number; packets: number }>((resolve, reject) => {
    client.on("error", reject)
    client.on("ready", () =>
      client.exec(`dd if=/dev/zero bs=1M count=${MEGABYTES} 2>/dev/null`, (error, stream) => {
        if (error) return reject(error)
        let bytes = 0
        let packets = 0
        stream.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          packets++
        })
        stream.on("close", () => resolve({ bytes, packets }))
      })
    )
    client.connect({ sock, username: "reviewer", hostVerifier: () => true })
  })
  client.end()
  await exited
  const writes = Number(/writes=(\d+)/.exec(stderr)?.[1] ?? Number.NaN)
  return { ...received, writes }
}

describe("prbox's SSH server's stdout", () => {
  it("sends what ssh2 writes in one tick as one write: fewer writes than data packets, not three a packet", async () => {
    const { bytes, packets, writes } = await serve()
    expect(bytes).toBe(MEGABYTES * 1024 * 1024)
    expect(packets).toBeGreaterThanOrEqual((MEGABYTES * 1024 * 1024) / (32 * 1024))
    // Each packet is its length, body and tag: three writes uncoalesced.
    expect(writes).toBeLessThan(2 * packets)
  })
})
