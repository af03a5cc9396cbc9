"use strict"
/*
 * prbox's preview relay, run inside a sandbox by its own Node (`node -e`).
 * Protocol v1: the client sends one line, then the connection is raw bytes.
 *   PRBOX-RELAY/1 <token> connect <port>  ->  "ok" then a pipe to 127.0.0.1:<port> (else ::1),
 *                                             "closed" when nothing listens there
 *   PRBOX-RELAY/1 <token> connect <port> <service>
 *                                         ->  the same to <service>:<port> on the Compose project's network,
 *                                             for a service named in PRBOX_RELAY_SERVICES only (given by
 *                                             prbox at start), a plain name (never an address): else
 *                                             "error service refused", before any dial
 *   PRBOX-RELAY/1 <token> ports           ->  "ok" then /proc/net/tcp and /proc/net/tcp6, then the end
 * A wrong token gets "denied", anything else "error <reason>"; both then close.
 * Node built-ins only: the sandbox's image may have nothing else.
 */
const crypto = require("node:crypto")
const fs = require("node:fs")
const net = require("node:net")

const MAX_LINE = 256
const LINE_TIMEOUT_MS = 5000
const DIAL_TIMEOUT_MS = 5000
const MAX_CONNECTIONS = 1024

const listenPort = Number(process.env.PRBOX_RELAY_PORT)
// Compared as digests: equal lengths for timingSafeEqual, nothing learned from timing.
const digest = (text) => crypto.createHash("sha256").update(text).digest()
const expected = digest(process.env.PRBOX_RELAY_TOKEN || "")
const hasToken = (process.env.PRBOX_RELAY_TOKEN || "").length > 0
// One lowercase DNS label starting with a letter: never an IP address (nor a number a resolver reads as one).
const SERVICE_NAME = /^[a-z][a-z0-9_-]{0,62}$/
const services = new Set(
  (process.env.PRBOX_RELAY_SERVICES || "").split(",").filter((name) => SERVICE_NAME.test(name) && name !== "localhost")
)

// The last words on a connection: what the client still sends is read and dropped until it closes too.
const finish = (socket, data) => {
  socket.setTimeout(LINE_TIMEOUT_MS, () => socket.destroy())
  socket.resume()
  socket.end(data)
}
const answer = (socket, line) => finish(socket, `${line}\n`)

// Whether a dial failure means "nothing listens here" (IPv6 off counts too).
const notListening = (error) => ["ECONNREFUSED", "EADDRNOTAVAIL", "EAFNOSUPPORT", "ENETUNREACH"].includes(error.code)

const dial = (port, hosts, done) => {
  const [host, ...rest] = hosts
  const upstream = net.connect({ host, port, allowHalfOpen: true, noDelay: true })
  upstream.setTimeout(DIAL_TIMEOUT_MS, () =>
    upstream.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" }))
  )
  const failed = (error) => {
    if (notListening(error) && rest.length > 0) dial(port, rest, done)
    else done(error, undefined)
  }
  upstream.once("error", failed)
  upstream.once("connect", () => {
    upstream.setTimeout(0)
    upstream.removeListener("error", failed)
    done(undefined, upstream)
  })
}

const connect = (client, port, hosts, early) =>
  dial(port, hosts, (error, upstream) => {
    if (client.destroyed) {
      upstream?.destroy()
      return
    }
    if (error !== undefined) {
      answer(client, notListening(error) ? "closed" : `error ${error.code || "dial failed"}`)
      return
    }
    client.write("ok\n")
    if (early.length > 0) upstream.write(early)
    const both = () => {
      client.destroy()
      upstream.destroy()
    }
    client.on("error", both).on("close", both)
    upstream.on("error", both).on("close", both)
    client.pipe(upstream)
    upstream.pipe(client)
    client.resume()
  })

const readIfPresent = (path) => {
  try {
    return fs.readFileSync(path)
  } catch (error) {
    if (error.code === "ENOENT") return Buffer.alloc(0)
    throw error
  }
}

const ports = (client) => {
  let text
  try {
    text = Buffer.concat([readIfPresent("/proc/net/tcp"), readIfPresent("/proc/net/tcp6")])
  } catch (error) {
    answer(client, `error ${error.code || "read failed"}`)
    return
  }
  client.write("ok\n")
  finish(client, text)
}

const handle = (client, line, early) => {
  const [version, token, command, port, service, ...extra] = line.split(" ")
  if (version !== "PRBOX-RELAY/1") return answer(client, "error unsupported protocol")
  if (!hasToken || !crypto.timingSafeEqual(digest(token || ""), expected)) return answer(client, "denied")
  if (command === "ports" && port === undefined) return ports(client)
  if (command !== "connect" || extra.length > 0 || !/^[0-9]{1,5}$/.test(port || "") || Number(port) > 65535) {
    return answer(client, "error bad request")
  }
  if (service === undefined) return connect(client, Number(port), ["127.0.0.1", "::1"], early)
  if (!services.has(service)) return answer(client, "error service refused")
  return connect(client, Number(port), [service], early)
}

// No Nagle: a request or an answer goes out at once, never held back for the next write.
const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => {
  client.on("error", () => client.destroy())
  client.setTimeout(LINE_TIMEOUT_MS, () => client.destroy())
  let head = Buffer.alloc(0)
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk])
    const end = head.indexOf(10)
    if (end < 0 && head.length < MAX_LINE) return
    client.removeListener("data", onData)
    client.pause()
    client.setTimeout(0)
    if (end < 0 || end >= MAX_LINE) return answer(client, "error line too long")
    handle(client, head.subarray(0, end).toString("latin1"), head.subarray(end + 1))
  }
  client.on("data", onData)
})
server.maxConnections = MAX_CONNECTIONS

server.on("error", (error) => {
  // Another relay already serves this container (two starts raced): this one is not needed.
  process.exit(error.code === "EADDRINUSE" ? 0 : 1)
})
server.listen({ port: listenPort, host: "0.0.0.0" })

for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => process.exit(0))
