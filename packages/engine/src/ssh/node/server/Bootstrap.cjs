"use strict"
/*
 * Run with `node -e` for one SSH connection; stdin brings, in order, one line
 * `PRBOX-SSH/1 <bundle bytes> <host key bytes>`, the server's bundle, the
 * host key (PEM), then the client's SSH bytes; stdout is the server's.
 * Nothing is read from a file the container could have written.
 */
const Module = require("node:module")
let head = Buffer.alloc(0)
let need
const onData = (chunk) => {
  head = head.length === 0 ? chunk : Buffer.concat([head, chunk])
  if (need === undefined) {
    const end = head.indexOf(10)
    if (end < 0) return
    const [version, bundle, key] = head.subarray(0, end).toString("latin1").split(" ")
    if (version !== "PRBOX-SSH/1") process.exit(2)
    need = { bundle: Number(bundle), key: Number(key) }
    head = head.subarray(end + 1)
  }
  if (head.length < need.bundle + need.key) return
  process.stdin.removeListener("data", onData)
  process.stdin.pause()
  const file = "/prbox-ssh-server.cjs"
  const server = new Module(file)
  server.filename = file
  server.paths = []
  server._compile(head.subarray(0, need.bundle).toString("utf8"), file)
  const hostKey = head.subarray(need.bundle, need.bundle + need.key)
  server.exports.serve({ hostKey, early: head.subarray(need.bundle + need.key) })
}
process.stdin.on("data", onData)
