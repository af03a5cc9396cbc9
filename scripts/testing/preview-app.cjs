// The app preview tests and `pnpm bench preview` run inside a sandbox: plain
// CommonJS on Node's built-ins only, so any Node there runs it as one file
// (prbox's code-server's node, or the image's).
//
//   node preview-app.cjs --port 3000 [--host 0.0.0.0] [--name app]
//   (--port 0: any free port; the "listening on" line on stdout says which)
//
//   GET /            200 "hello from <name> on <host>:<port>", then a line with
//   GET /path/...        the path and the Host header the app saw
//   GET /big?mb=N    N MiB in 64 KiB chunks, with Content-Length, at the pace the
//                    client reads (backpressure), so nothing is buffered whole
//   POST /echo       the request body streamed back
//   GET /ws          WebSocket (RFC 6455): text and binary frames echoed, ping
//                    answered with pong, close with close. Small frames only:
//                    a payload of 64 KiB or more is refused with close 1009.
"use strict"
const { createHash } = require("node:crypto")
const { createServer } = require("node:http")
const { parseArgs } = require("node:util")

const usage = () => {
  process.stderr.write("usage: node preview-app.cjs --port N [--host H (0.0.0.0)] [--name S (app)]\n")
  process.exit(2)
}
const options = {
  port: { type: "string" },
  host: { type: "string", default: "0.0.0.0" },
  name: { type: "string", default: "app" }
}
let values
try {
  values = parseArgs({ args: process.argv.slice(2), options }).values
} catch {
  usage()
}
if (!/^\d{1,5}$/.test(values.port ?? "") || Number(values.port) > 65535) usage()
const port = Number(values.port)
const { host, name } = values

const MiB = 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, "0123456789abcdef")
const MAX_MB = 10 * 1024

/** Resolves when `res` can take more, or is closed. */
const drained = (res) =>
  new Promise((resolve) => {
    const done = () => {
      res.off("drain", done).off("close", done)
      resolve()
    }
    res.on("drain", done).on("close", done)
  })

/** Writes `mb` MiB, waiting whenever the socket's buffer is full; stops if the client goes. */
const big = async (res, mb) => {
  res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(mb * MiB) })
  for (let left = mb * MiB; left > 0 && !res.destroyed; left -= CHUNK.length) {
    if (!res.write(CHUNK)) await drained(res)
  }
  res.end()
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://app")
  const text = (status, body) => {
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8" })
    res.end(body)
  }
  if (req.method === "GET" && (url.pathname === "/" || url.pathname.startsWith("/path/"))) {
    const hello = `hello from ${name} on ${host}:${req.socket.localPort}`
    return text(200, `${hello}\npath ${req.url} host ${req.headers.host ?? ""}\n`)
  }
  if (req.method === "GET" && url.pathname === "/big") {
    const mb = Number(url.searchParams.get("mb") ?? "1")
    if (!Number.isInteger(mb) || mb < 0 || mb > MAX_MB) return text(400, `mb must be a whole number 0..${MAX_MB}\n`)
    return void big(res, mb)
  }
  if (req.method === "POST" && url.pathname === "/echo") {
    const length = req.headers["content-length"]
    res.writeHead(200, {
      "content-type": req.headers["content-type"] ?? "application/octet-stream",
      ...(length === undefined ? {} : { "content-length": length })
    })
    return void req.pipe(res)
  }
  text(404, `not found: ${req.method} ${req.url}\n`)
})

// --- WebSocket ----------------------------------------------------------------

const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
const OP = { close: 0x8, ping: 0x9, pong: 0xa }

/** One unmasked frame (server to client); `first` is the FIN bit and opcode. */
const frame = (first, payload) => {
  const header =
    payload.length < 126
      ? Buffer.from([first, payload.length])
      : Buffer.from([first, 126, payload.length >> 8, payload.length & 0xff])
  return Buffer.concat([header, payload])
}

const closeFrame = (code) => frame(0x80 | OP.close, Buffer.from([code >> 8, code & 0xff]))

server.on("upgrade", (req, socket, head) => {
  socket.on("error", () => socket.destroy())
  const key = req.headers["sec-websocket-key"]
  if (req.url !== "/ws" || (req.headers.upgrade ?? "").toLowerCase() !== "websocket" || typeof key !== "string") {
    socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
    return
  }
  const accept = createHash("sha1")
    .update(key + WS_GUID)
    .digest("base64")
  socket.write(
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`
  )
  let buffered = head
  const onData = (chunk) => {
    buffered = Buffer.concat([buffered, chunk])
    // A frame: FIN+opcode, MASK+length (126: two more length bytes), 4 mask bytes, payload.
    while (buffered.length >= 2) {
      const first = buffered[0]
      const masked = (buffered[1] & 0x80) !== 0
      const short = buffered[1] & 0x7f
      if (!masked) return socket.end(closeFrame(1002)) // clients must mask
      if (short === 127) return socket.end(closeFrame(1009)) // 64 KiB or more: not for this app
      const lengthBytes = short === 126 ? 2 : 0
      if (buffered.length < 2 + lengthBytes) return
      const length = short === 126 ? buffered.readUInt16BE(2) : short
      const start = 2 + lengthBytes + 4
      if (buffered.length < start + length) return
      const mask = buffered.subarray(start - 4, start)
      const payload = Buffer.from(buffered.subarray(start, start + length))
      for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i % 4]
      buffered = buffered.subarray(start + length)
      const opcode = first & 0x0f
      if (opcode === OP.close) return socket.end(frame(0x80 | OP.close, payload))
      if (opcode === OP.ping) socket.write(frame(0x80 | OP.pong, payload))
      // Text, binary and continuation frames go back as they came (FIN and opcode kept).
      else if (opcode !== OP.pong) socket.write(frame(first, payload))
    }
  }
  socket.on("data", onData)
  if (head.length > 0) onData(Buffer.alloc(0))
})

server.listen(port, host, () => {
  process.stdout.write(`preview-app ${name} listening on ${host}:${server.address().port}\n`)
})
