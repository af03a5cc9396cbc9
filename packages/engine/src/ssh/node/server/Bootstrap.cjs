"use strict"
/*
 * Run with `node -e` for one SSH connection; stdin brings, in order, one line
 * `PRBOX-SSH/2 <bundle bytes> <host key bytes> <socket path or ->`, the
 * server's bundle, the host key (PEM). Where the client listens at the
 * socket (in the sandbox's read-only folder of sockets), the server dials it
 * and says "S" on stdout: the connection is that socket's. Otherwise (no
 * such folder: a container made without it, a remote engine) it says "I":
 * the client's SSH bytes follow on stdin, and stdout is the server's.
 * Nothing is read from a file the container could have written.
 */
const Module = require("node:module")
const net = require("node:net")
let head = Buffer.alloc(0)
let need
const start = (bundle, hostKey, socketPath) => {
  const file = "/prbox-ssh-server.cjs"
  const server = new Module(file)
  server.filename = file
  server.paths = []
  server._compile(bundle.toString("utf8"), file)
  const overStdio = () => {
    process.stdout.write("I")
    server.exports.serve({ hostKey, early: head.subarray(need.bundle + need.key) })
  }
  if (socketPath === "-") return overStdio()
  const socket = net.connect(socketPath)
  socket.once("error", overStdio)
  socket.once("connect", () => {
    socket.removeListener("error", overStdio)
    process.stdout.write("S")
    // The daemon ends stdin when the connection is done with: so does the server.
    process.stdin.on("end", () => process.exit(0))
    process.stdin.resume()
    server.exports.serve({ hostKey, socket })
  })
}
const onData = (chunk) => {
  head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
  if (need === undefined) {
    const end = head.indexOf(10)
    if (end < 0) return
    const [version, bundle, key, socket] = head.subarray(0, end).toString("latin1").split(" ")
    if (version !== "PRBOX-SSH/2" || socket === undefined) process.exit(2)
    need = { bundle: Number(bundle), key: Number(key), socket }
    head = head.subarray(end + 1)
  }
  if (head.length < need.bundle + need.key) return
  process.stdin.removeListener("data", onData)
  process.stdin.pause()
  start(head.subarray(0, need.bundle), head.subarray(need.bundle, need.bundle + need.key), need.socket)
}
process.stdin.on("data", onData)
