import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { join } from "node:path"
import { listeningPorts } from "@prbox/domain"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeRemote, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { previewHome, startApp } from "./preview-support.ts"
import { freePort, listeners, runTool, sshHome } from "./ssh-support.ts"
import { call, prbox, socketOf, tearDown, until } from "./support.ts"

/*
 * OpenSSH's own client (Debian's openssh-client) into a real sandbox through
 * `prbox ssh-config`'s entry: ssh, sftp, scp, -L, -D with ControlMaster (what
 * VS Code Remote-SSH runs), and what must be refused.
 */

let home: string
let remote: TestRemote
let id = ""
let config = ""
let user = ""

const ssh = (args: ReadonlyArray<string>, input?: string | Buffer) =>
  runTool("ssh", ["-F", config, "-o", "BatchMode=yes", ...args], {
    home: user,
    ...(input === undefined ? {} : { input })
  })

const execIn = async (argv: ReadonlyArray<string>): Promise<string> => {
  const answer = await call(socketOf(home), {
    method: "POST",
    path: `/v1/sandboxes/${id}/exec`,
    body: JSON.stringify({ argv })
  })
  const result = answer.json() as { exitCode?: number; stdout?: string }
  if (answer.status !== 200) throw new Error(`exec failed: ${answer.text}`)
  return result.stdout ?? ""
}

/** The TCP ports listening inside the sandbox (its /proc/net/tcp and tcp6). */
const containerPorts = async () =>
  listeningPorts(await execIn(["sh", "-c", "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"]))

/** The daemon's listening sockets on the host (by its pid), as `ss` lists them. */
const daemonListeners = async () => {
  const pid = readFileSync(join(home, "run", "prboxd.lock"), "utf8").trim()
  const run = await runTool("ss", ["-ltnpH"], { home: user })
  return listeners(
    run.stdout
      .split("\n")
      .filter((line) => line.includes(`pid=${pid},`))
      .join("\n")
  )
}

beforeAll(async () => {
  home = previewHome("ssh")
  remote = makeRemote(home)
  const run = await prbox(home, ["open", remote.path, "--pr", "1"])
  id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1] ?? ""
  if (id === "") throw new Error(`open failed: ${run.stdout}${run.stderr}`)
  const printed = await prbox(home, ["ssh-config"])
  expect(printed.code, printed.stderr).toBe(0)
  config = join(home, "ssh", "config")
  expect(readFileSync(config, "utf8").trim()).toBe(printed.stdout.trim())
  user = sshHome()
}, 600_000)

afterAll(async () => {
  await tearDown(home)
  rmSync(user, { recursive: true, force: true })
})

describe("ssh <id>.prbox", () => {
  it("runs a command as the sandbox user with stdin, stdout, stderr and its exit code", async () => {
    const run = await ssh([`${id}.prbox`, "tr a-z A-Z; echo to-stderr >&2; id -u; exit 7"], "abc\n")
    expect(run.code, run.stderr).toBe(7)
    expect(run.stdout).toBe(`ABC\n${(await execIn(["id", "-u"])).trim()}\n`)
    expect(run.stderr).toContain("to-stderr")
  })

  it("gives a shell a pty of the client's size", async () => {
    const command = `stty cols 101 rows 31; ssh -F '${config}' -tt ${id}.prbox`
    const run = await runTool("script", ["--quiet", "--return", "--command", command, "/dev/null"], {
      home: user,
      input: "stty size; tty; exit 5\n"
    })
    expect(run.code, run.stdout + run.stderr).toBe(5)
    expect(run.stdout).toContain("31 101")
    expect(run.stdout).toMatch(/\/dev\/pts\/\d+/)
  })

  it("moves 50 MB with sftp both ways, and a file with scp, unchanged", async () => {
    const data = Buffer.alloc(50 * 1024 * 1024)
    for (let at = 0; at < data.length; at += 4096) data.writeUInt32LE((at * 2654435761) >>> 0, at)
    const local = join(user, "big.bin")
    writeFileSync(local, data)
    const sum = createHash("sha256").update(data).digest("hex")
    const run = await runTool("sftp", ["-F", config, "-b", "-", `${id}.prbox`], {
      home: user,
      input: `put ${local} /tmp/big.bin\nget /tmp/big.bin ${local}.back\n`
    })
    expect(run.code, run.stderr).toBe(0)
    expect((await execIn(["sha256sum", "/tmp/big.bin"])).split(" ")[0]).toBe(sum)
    expect(
      createHash("sha256")
        .update(readFileSync(`${local}.back`))
        .digest("hex")
    ).toBe(sum)
    writeFileSync(join(user, "small.txt"), "through scp\n")
    const scp = await runTool("scp", ["-F", config, join(user, "small.txt"), `${id}.prbox:/tmp/small.txt`], {
      home: user
    })
    expect(scp.code, scp.stderr).toBe(0)
    expect(await execIn(["cat", "/tmp/small.txt"])).toBe("through scp\n")
  }, 180_000)

  it("offers OpenSSH's sftp its limits, as OpenSSH's sftp-server does: requests of 255 KiB, not 32", async () => {
    const run = await runTool("sftp", ["-vvv", "-F", config, "-b", "-", `${id}.prbox`], {
      home: user,
      input: "ls /tmp\n"
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/Server supports extension "limits@openssh.com" revision 1/)
    expect(run.stderr).toMatch(/using 261120 \/ 261120/)
  })

  it("forwards -L to an app listening on the sandbox's loopback", async () => {
    await startApp(home, id, 3001, "127.0.0.1", "inside")
    const port = await freePort()
    const tunnel = spawn(
      "ssh",
      ["-F", config, "-N", "-o", "ExitOnForwardFailure=yes", "-L", `${port}:127.0.0.1:3001`, `${id}.prbox`],
      { env: { ...process.env, HOME: user }, stdio: "ignore" }
    )
    try {
      let body = ""
      await until("the forward to answer", async () => {
        const curl = await runTool("curl", ["-s", `http://127.0.0.1:${port}/`], { home: user })
        body = curl.stdout
        return curl.code === 0
      })
      expect(body).toContain("inside")
    } finally {
      tunnel.kill()
    }
  })

  it("runs Remote-SSH's invocation: -T -D bash over a shared connection; no port opened in the sandbox or by prboxd", async () => {
    const control = join(user, "control-%C")
    const shared = ["-o", "ControlMaster=auto", "-o", `ControlPath=${control}`, "-o", "ControlPersist=30"]
    const socks = await freePort()
    const before = { container: await containerPorts(), daemon: await daemonListeners() }
    const bash = await ssh([...shared, "-T", "-D", String(socks), `${id}.prbox`, "bash"], "echo remote-ssh $((6*7))\n")
    expect(bash.code, bash.stderr).toBe(0)
    expect(bash.stdout).toBe("remote-ssh 42\n")
    const reused = await ssh([...shared, "-O", "check", `${id}.prbox`])
    expect(reused.code, reused.stderr).toBe(0)
    const during = await ssh([...shared, `${id}.prbox`, "cat /proc/net/tcp /proc/net/tcp6 2>/dev/null"])
    expect(listeningPorts(during.stdout)).toEqual(before.container)
    expect(await daemonListeners()).toEqual(before.daemon)
    const curl = await runTool("curl", ["-s", "--socks5-hostname", `127.0.0.1:${socks}`, "http://127.0.0.1:3001/"], {
      home: user
    })
    expect(curl.stdout).toContain("inside")
    await ssh([...shared, "-O", "exit", `${id}.prbox`])
  })

  it("carries a connection over a socket the sandbox's server dials, not through the engine; the sandbox cannot write where it dials", async () => {
    const control = join(user, "socket-%C")
    const shared = ["-o", "ControlMaster=auto", "-o", `ControlPath=${control}`, "-o", "ControlPersist=30"]
    const folder = join(home, "sandboxes", id, "ssh")
    const attempt = await ssh(
      [...shared, `${id}.prbox`, "touch /opt/prbox/ssh/planted; ln -s / /opt/prbox/ssh/link; echo tried"],
      ""
    )
    expect(attempt.stdout).toBe("tried\n")
    expect(attempt.stderr).toMatch(/Read-only file system/)
    // The connection this runs on is the daemon's socket (bound by a handle on its folder: no host path shows).
    const unix = await ssh([...shared, `${id}.prbox`, "cat /proc/net/unix"])
    expect(unix.stdout).toMatch(/ \/proc\/self\/fd\/\d+\/[0-9a-f]{24}\.sock$/m)
    expect(unix.stdout).not.toContain(home)
    // Gone from the folder once dialled; nothing the sandbox tried is there.
    expect(readdirSync(folder)).toEqual([])
    await ssh([...shared, "-O", "exit", `${id}.prbox`])
  })

  it("refuses a socket name prbox would not make (a path, another folder) before starting anything", async () => {
    for (const name of ["..%2F..%2Frun%2Fprboxd.sock", "0123456789abcdef01234567.sock%20x", "x.sock"]) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(socketOf(home))
        let text = ""
        socket.on("data", (chunk: Buffer) => {
          text += chunk.toString("latin1")
        })
        socket.on("end", () => resolve(text))
        socket.on("error", reject)
        socket.write(
          `POST /v1/sandboxes/${id}/ssh?socket=${name} HTTP/1.1\r\nHost: prboxd\r\nConnection: Upgrade\r\nUpgrade: prbox-ssh\r\nContent-Length: 0\r\n\r\n`
        )
      })
      expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    }
  })

  it("refuses agent forwarding: no agent socket in the sandbox", async () => {
    const agent = await runTool("ssh-agent", ["-s"], { home: user })
    const sock = /SSH_AUTH_SOCK=([^;]+);/.exec(agent.stdout)?.[1] ?? ""
    const pid = /SSH_AGENT_PID=(\d+);/.exec(agent.stdout)?.[1] ?? ""
    try {
      const run = await runTool(
        "ssh",
        ["-F", config, "-o", "ForwardAgent=yes", `${id}.prbox`, 'echo "agent=$' + '{SSH_AUTH_SOCK:-none}"'],
        { home: user, env: { SSH_AUTH_SOCK: sock } }
      )
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toBe("agent=none\n")
    } finally {
      if (pid !== "") process.kill(Number(pid))
    }
  })

  it("refuses a host key other than the sandbox's pinned one", async () => {
    const pinned = readFileSync(join(home, "ssh", "known_hosts"), "utf8")
    expect(pinned).toMatch(new RegExp(`^${id}\\.prbox ssh-ed25519 `, "m"))
    const other = join(user, "other_known_hosts")
    writeFileSync(
      other,
      `${id}.prbox ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n`
    )
    const run = await ssh(["-o", `UserKnownHostsFile=${other}`, `${id}.prbox`, "true"])
    expect(run.code).toBe(255)
    expect(run.stderr).toMatch(/REMOTE HOST IDENTIFICATION HAS CHANGED|Host key verification failed/)
  })

  it("a daemon stopping cuts its open SSH connections instead of waiting for them", async () => {
    const control = join(user, "stop-%C")
    const shared = ["-o", "ControlMaster=auto", "-o", `ControlPath=${control}`, "-o", "ControlPersist=60"]
    const opened = await ssh([...shared, `${id}.prbox`, "true"])
    expect(opened.code, opened.stderr).toBe(0)
    expect((await ssh([...shared, "-O", "check", `${id}.prbox`])).code).toBe(0)
    const stopped = await prbox(home, ["daemon", "stop"])
    expect(stopped.code, stopped.stderr).toBe(0)
    await until(
      "the shared connection to end",
      async () => (await ssh([...shared, "-O", "check", `${id}.prbox`])).code !== 0
    )
  })

  it("answers a stopped sandbox with the `prbox restart` hint", async () => {
    const stopped = await prbox(home, ["stop", id])
    expect(stopped.code, stopped.stderr).toBe(0)
    const run = await ssh([`${id}.prbox`, "true"])
    expect(run.code).toBe(255)
    expect(run.stderr).toContain(`prbox restart ${id}`)
  })
})
