"use strict"
/*
 * prbox's SSH server, run inside a sandbox as its user by the sandbox's own
 * Node for one connection: a socket it dialled to the daemon, else this
 * process's stdin and stdout (bundled with ssh2 into one file by
 * SshBundle.ts; see Bootstrap.cjs). The daemon's socket is the
 * authentication: any client method is accepted.
 * Served: exec and shell (a pty through code-server's node-pty, else
 * `script`), window changes, signals, the sftp subsystem, direct-tcpip
 * (-L, -D) to the container's own network. Refused: agent forwarding,
 * X11, remote forwarding (-R).
 */
const { spawn } = require("node:child_process")
const fs = require("node:fs")
const net = require("node:net")
const path = require("node:path")
const { Duplex } = require("node:stream")
const { Server } = require("ssh2")
const { serveSftp } = require("./SftpServer.cjs")

const SFTP_SERVERS = [
  "/usr/lib/openssh/sftp-server",
  "/usr/libexec/openssh/sftp-server",
  "/usr/lib/ssh/sftp-server",
  "/usr/libexec/sftp-server"
]

const firstExisting = (candidates) => candidates.find((file) => fs.existsSync(file))

/** code-server's node-pty (a native module shipped for this Node), or undefined. */
const loadPty = () => {
  const root = path.resolve(path.dirname(process.execPath), "..")
  const candidates = [
    path.join(root, "lib/node_modules/code-server/lib/vscode/node_modules/node-pty"),
    path.join(root, "lib/vscode/node_modules/node-pty"),
    "/usr/lib/code-server/lib/vscode/node_modules/node-pty"
  ]
  for (const candidate of candidates) {
    try {
      if (fs.existsSync(candidate)) return require(candidate)
    } catch {
      // Built for another Node: the next candidate, else `script`.
    }
  }
  return undefined
}

/** The user's login shell from /etc/passwd, else $SHELL, else /bin/sh. */
const loginShell = () => {
  try {
    const uid = process.getuid()
    for (const line of fs.readFileSync("/etc/passwd", "utf8").split("\n")) {
      const fields = line.split(":")
      if (Number(fields[2]) === uid && fields[6] && fs.existsSync(fields[6])) return fields[6]
    }
  } catch {
    // No passwd: the fallbacks.
  }
  return process.env.SHELL && fs.existsSync(process.env.SHELL) ? process.env.SHELL : "/bin/sh"
}

/**
 * ssh2 writes each packet in pieces (its length, its body, its tag) and a
 * burst of packets one by one; what it writes to `socket` in one tick, and
 * while the last write is under way, leaves as one write, so every hop to
 * the client (Docker's stream or the daemon's socket, prboxd, ssh-proxy)
 * carries a few large chunks instead of three per packet.
 */
const batchWrites = (socket) => {
  const write = socket.write.bind(socket)
  socket.write = (...args) => {
    if (socket.writableCorked === 0) {
      socket.cork()
      process.nextTick(() => socket.uncork())
    }
    return write(...args)
  }
  return socket
}

/** A Duplex over this process's stdin (after `early`) and stdout: the connection. */
const stdioSocket = (early) => {
  const input = process.stdin
  const socket = new Duplex({
    read() {
      input.resume()
    },
    writev(chunks, done) {
      const data = chunks.length === 1 ? chunks[0].chunk : Buffer.concat(chunks.map(({ chunk }) => chunk))
      process.stdout.write(data, done)
    },
    final(done) {
      process.stdout.end(done)
    }
  })
  if (early.length > 0) socket.push(early)
  input.on("data", (chunk) => {
    if (!socket.push(chunk)) input.pause()
  })
  input.on("end", () => socket.push(null))
  socket.remoteAddress = "127.0.0.1"
  socket.remotePort = 0
  socket.remoteFamily = "IPv4"
  socket.setNoDelay = () => socket
  socket.setKeepAlive = () => socket
  return socket
}

const exitWith = (stream, code, signal) => {
  if (signal) stream.exit(signal.replace(/^SIG/, ""), false, "")
  else stream.exit(code ?? 0)
  stream.end()
}

const SIGNALS = new Set([
  "ABRT",
  "ALRM",
  "FPE",
  "HUP",
  "ILL",
  "INT",
  "KILL",
  "PIPE",
  "QUIT",
  "SEGV",
  "TERM",
  "USR1",
  "USR2"
])
const SIGNAL_NAMES = { 1: "HUP", 2: "INT", 3: "QUIT", 6: "ABRT", 9: "KILL", 13: "PIPE", 14: "ALRM", 15: "TERM" }

const children = new Set()

const runSession = (session) => {
  let pty
  let env = {}
  let child
  session.on("pty", (accept, _reject, info) => {
    pty = { term: info.term || "xterm-256color", cols: info.cols || 80, rows: info.rows || 24 }
    accept?.()
  })
  session.on("env", (accept, _reject, info) => {
    env = { ...env, [info.key]: info.val }
    accept?.()
  })
  session.on("window-change", (accept, _reject, info) => {
    if (pty) Object.assign(pty, { cols: info.cols, rows: info.rows })
    child?.resize?.(info.cols, info.rows)
    accept?.()
  })
  session.on("signal", (accept, _reject, info) => {
    if (SIGNALS.has(info.name)) child?.signal(`SIG${info.name}`)
    accept?.()
  })
  session.on("auth-agent", (_accept, reject) => reject?.())
  session.on("x11", (_accept, reject) => reject?.())
  const start = (accept, command) => {
    const stream = accept()
    const shell = loginShell()
    const argv = command === undefined ? ["-l"] : ["-c", command]
    const cwd =
      process.env.PRBOX_SSH_CWD && fs.existsSync(process.env.PRBOX_SSH_CWD)
        ? process.env.PRBOX_SSH_CWD
        : process.env.HOME || "/"
    const childEnv = { ...process.env, ...env, SHELL: shell }
    delete childEnv.PRBOX_SSH_CWD
    if (pty) child = withPty(stream, shell, argv, cwd, { ...childEnv, TERM: pty.term }, pty)
    else child = withPipes(stream, shell, argv, cwd, childEnv)
    children.add(child)
  }
  session.on("shell", (accept) => start(accept, undefined))
  session.on("exec", (accept, _reject, info) => start(accept, info.command))
  session.on("subsystem", (accept, reject, info) => {
    const server = info.name === "sftp" ? firstExisting(SFTP_SERVERS) : undefined
    if (server === undefined) return reject?.()
    start(accept, `exec ${server}`)
  })
  if (firstExisting(SFTP_SERVERS) === undefined) session.on("sftp", (accept) => serveSftp(accept()))
}

const withPipes = (stream, shell, argv, cwd, env) => {
  const proc = spawn(shell, argv, { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true })
  stream.pipe(proc.stdin)
  proc.stdout.pipe(stream, { end: false })
  proc.stderr.pipe(stream.stderr, { end: false })
  proc.stdin.on("error", () => {})
  let outputs = 2
  let status
  const done = () => {
    if (outputs === 0 && status !== undefined) {
      children.delete(handle)
      exitWith(stream, status.code, status.signal)
    }
  }
  proc.stdout.on("end", () => {
    outputs--
    done()
  })
  proc.stderr.on("end", () => {
    outputs--
    done()
  })
  proc.on("exit", (code, signal) => {
    status = { code, signal }
    done()
  })
  proc.on("error", (error) => {
    stream.stderr.write(`prbox: ${error.message}\n`)
    status = { code: 127 }
    outputs = 0
    done()
  })
  stream.on("close", () => killGroup(proc.pid, "SIGHUP"))
  const handle = { signal: (name) => killGroup(proc.pid, name), hangUp: () => killGroup(proc.pid, "SIGHUP") }
  return handle
}

const killGroup = (pid, signal) => {
  try {
    process.kill(-pid, signal)
  } catch {
    // Gone already.
  }
}

const quoted = (word) => `'${word.replace(/'/g, "'\\''")}'`

const withPty = (stream, shell, argv, cwd, env, size) => {
  const ptyModule = loadPty()
  if (ptyModule === undefined) {
    // No node-pty for this Node: util-linux's `script` makes the pty.
    const command = [shell, ...argv].map(quoted).join(" ")
    return withPipes(stream, "/bin/sh", ["-c", `exec script -qfec ${quoted(command)} /dev/null`], cwd, env)
  }
  const term = ptyModule.spawn(shell, argv, { name: env.TERM, cols: size.cols, rows: size.rows, cwd, env })
  term.onData((data) => stream.write(data))
  stream.on("data", (data) => term.write(data.toString("utf8")))
  term.onExit(({ exitCode, signal }) => {
    children.delete(handle)
    // The last output reaches the channel before its exit status.
    setImmediate(() => exitWith(stream, exitCode, signal ? `SIG${SIGNAL_NAMES[signal] || "TERM"}` : undefined))
  })
  stream.on("close", () => killGroup(term.pid, "SIGHUP"))
  const handle = {
    resize: (cols, rows) => term.resize(cols, rows),
    signal: (name) => killGroup(term.pid, name),
    hangUp: () => killGroup(term.pid, "SIGHUP")
  }
  return handle
}

/** -L and -D: a connection to the container's own network, as its user would make it. */
const forward = (accept, reject, info) => {
  const upstream = net.connect({ host: info.destIP, port: info.destPort })
  upstream.once("error", () => reject?.())
  upstream.once("connect", () => {
    const channel = accept()
    upstream.removeAllListeners("error")
    upstream.on("error", () => channel.destroy())
    channel.on("error", () => upstream.destroy())
    channel.pipe(upstream).pipe(channel)
  })
}

/** Serves one connection: `socket` (the daemon's, dialled), else stdin (after `early`) and stdout. */
exports.serve = ({ hostKey, early, socket }) => {
  const debug = process.env.PRBOX_SSH_DEBUG === "1" ? (line) => process.stderr.write(`${line}\n`) : undefined
  // Ciphers Node's crypto runs natively: ssh2's chacha20-poly1305 is JavaScript without its addon.
  const algorithms = { cipher: ["aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "aes128-ctr", "aes256-ctr"] }
  const server = new Server({ hostKeys: [hostKey], ident: "prbox", debug, algorithms }, (client) => {
    client.on("authentication", (context) => context.accept())
    client.on("session", (accept) => runSession(accept()))
    client.on("tcpip", forward)
    client.on("request", (_accept, reject, name) => {
      // tcpip-forward (-R) and the streamlocal forwards: nothing listens in a sandbox for a client.
      reject?.()
      if (name === "tcpip-forward") process.stderr.write("prbox: remote forwarding (-R) is refused\n")
    })
    client.on("error", () => {})
    client.on("close", () => {
      for (const child of children) child.hangUp()
      process.exit(0)
    })
  })
  server.injectSocket(batchWrites(socket ?? stdioSocket(early)))
}
