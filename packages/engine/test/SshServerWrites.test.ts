import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Socket } from "node:net"
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

/** An ssh2 client over `sock` runs `dd` of MEGABYTES: what it received, in how many data packets. */
const runDd = (sock: Duplex) => {
  const client = new ssh2.Client()
  return new Promise<{ bytes: number; packets: number }>((resolve, reject) => {
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
        stream.on("close", () => {
          client.end()
          resolve({ bytes, packets })
        })
      })
    )
    client.connect({ sock, username: "reviewer", hostVerifier: () => true })
  })
}

/**
 * prbox's SSH server (the bundle the sandboxes get) run by this machine's
 * Node with pipes for stdin and stdout, as Docker gives them, told `socket`
 * ("-": none). The first byte it writes, and the child.
 */
const startServer = async (socket: string) => {
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
  child.stdin.write(`PRBOX-SSH/2 ${bundle.length} ${hostKey.length} ${socket}\n`)
  child.stdin.write(bundle)
  child.stdin.write(hostKey)
  const marker = await new Promise<string>((resolve) => {
    const onReadable = () => {
      const byte = child.stdout.read(1) as Buffer | null
      if (byte === null) return
      child.stdout.removeListener("readable", onReadable)
      resolve(byte.toString("latin1"))
    }
    child.stdout.on("readable", onReadable)
  })
  const writes = async () => {
    await exited
    return Number(/writes=(\d+)/.exec(stderr)?.[1] ?? Number.NaN)
  }
  return { child, marker, writes }
}

/** The server's stdin and stdout as one stream, after its marker. */
const overStdio = (child: ReturnType<typeof spawn>) => {
  const { stdin, stdout } = child
  if (stdin === null || stdout === null) throw new Error("no pipes")
  const sock = new Duplex({
    read() {
      stdout.resume()
    },
    write(chunk: Buffer, _encoding, done) {
      stdin.write(chunk, done)
    },
    final(done) {
      stdin.end(done)
    }
  })
  stdout.on("data", (chunk: Buffer) => {
    if (!sock.push(chunk)) stdout.pause()
  })
  stdout.on("end", () => sock.push(null))
  return sock
}

describe("prbox's SSH server's stdout", () => {
  it("sends what ssh2 writes in one tick as one write: fewer writes than data packets, not three a packet", async () => {
    const server = await startServer("-")
    expect(server.marker).toBe("I")
    const { bytes, packets } = await runDd(overStdio(server.child))
    const writes = await server.writes()
    expect(bytes).toBe(MEGABYTES * 1024 * 1024)
    expect(packets).toBeGreaterThanOrEqual((MEGABYTES * 1024 * 1024) / (32 * 1024))
    // Each packet is its length, body and tag: three writes uncoalesced.
    expect(writes).toBeLessThan(2 * packets)
  })

  it("serves over the socket it is told to dial, saying only so on stdout", async () => {
    const path = join(folder, "dial.sock")
    const accepted = new Promise<Socket>((resolve) => {
      const listener = createServer({ pauseOnConnect: true }, (socket) => {
        listener.close()
        resolve(socket)
      }).listen(path)
    })
    const server = await startServer(path)
    expect(server.marker).toBe("S")
    let stdout = 0
    server.child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.length
    })
    const socket = await accepted
    const { bytes } = await runDd(socket)
    expect(bytes).toBe(MEGABYTES * 1024 * 1024)
    // The daemon ends its stdin when the connection is done with: the server ends.
    server.child.stdin?.end()
    expect(await server.writes()).toBe(1)
    expect(stdout).toBe(0)
  })

  it("ends when its stdin ends (the daemon let go of it), the dialled connection still open", async () => {
    const path = join(folder, "held.sock")
    const accepted = new Promise<Socket>((resolve) => {
      const listener = createServer((socket) => {
        listener.close()
        resolve(socket)
      }).listen(path)
    })
    const server = await startServer(path)
    expect(server.marker).toBe("S")
    const socket = await accepted
    server.child.stdin?.end()
    await server.writes()
    socket.destroy()
  })

  it("serves stdin and stdout when there is no socket where it is told (a container without the folder)", async () => {
    const server = await startServer(join(folder, "missing", "dial.sock"))
    expect(server.marker).toBe("I")
    const { bytes } = await runDd(overStdio(server.child))
    expect(bytes).toBe(MEGABYTES * 1024 * 1024)
    await server.writes()
  })
})
