import { randomBytes } from "node:crypto"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitSync, makeRemote } from "../../../packages/git/test/helpers.ts"
import { previewHome } from "./preview-support.ts"
import { runTool, sshHome } from "./ssh-support.ts"
import { prbox, tearDown } from "./support.ts"

/*
 * The secrets guarantee with SSH in use: the daemon runs with a developer's
 * credentials (an ssh-agent holding a key, tokens in its environment, a git
 * credential helper) and fetches the user's dotfiles with them; while an
 * `ssh <id>.prbox` connection that asks for agent forwarding is open, none
 * of it is in the container, its home or its environment.
 */

const token = `ghp_prboxSshFake${randomBytes(12).toString("hex")}`
let home = ""
let user = ""
let id = ""
let config = ""
let agentPid = ""
let agentSock = ""
let privateKey = ""
let publicKey = ""
let control = ""

const ssh = (args: ReadonlyArray<string>) =>
  runTool("ssh", ["-F", config, "-o", "BatchMode=yes", "-o", `ControlPath=${control}`, ...args], {
    home: user,
    env: { SSH_AUTH_SOCK: agentSock }
  })

/** `script` run over the open connection; its stdout. */
const inSandbox = async (script: string): Promise<string> => {
  const run = await ssh([`${id}.prbox`, script])
  expect(run.code, run.stderr).toBe(0)
  return run.stdout
}

beforeAll(async () => {
  user = sshHome()
  // The developer's key, loaded in their agent.
  const keyFile = join(user, ".ssh", "id_ed25519")
  mkdirSync(join(user, ".ssh"), { mode: 0o700 })
  const keygen = await runTool("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "host-key", "-f", keyFile], {
    home: user
  })
  expect(keygen.code, keygen.stderr).toBe(0)
  privateKey = readFileSync(keyFile, "utf8").split("\n")[2] ?? ""
  publicKey = readFileSync(`${keyFile}.pub`, "utf8").split(" ")[1] ?? ""
  const agent = await runTool("ssh-agent", ["-s"], { home: user })
  agentSock = /SSH_AUTH_SOCK=([^;]+);/.exec(agent.stdout)?.[1] ?? ""
  agentPid = /SSH_AGENT_PID=(\d+);/.exec(agent.stdout)?.[1] ?? ""
  const added = await runTool("ssh-add", [keyFile], { home: user, env: { SSH_AUTH_SOCK: agentSock } })
  expect(added.code, added.stderr).toBe(0)
  // A credential helper and an auth header in the git config the daemon's git reads.
  const gitconfig = join(user, "host.gitconfig")
  writeFileSync(
    gitconfig,
    `[user]\n\tname = Host Person\n\temail = host@prbox.invalid\n[http]\n\textraHeader = Authorization: Bearer ${token}\n[credential]\n\thelper = "!f() { echo password=${token}; }; f"\n`
  )
  // The user's dotfiles: fetched by the daemon with all of the above in reach.
  const dots = join(user, "dots")
  gitSync(user, "init", "--quiet", "--initial-branch=main", dots)
  writeFileSync(join(dots, ".bashrc"), "# mine\n")
  gitSync(dots, "add", ".bashrc")
  gitSync(dots, "commit", "--quiet", "-m", "dotfiles")

  home = previewHome("ssh-secrets", { dotfiles: dots })
  const remote = makeRemote(home)
  const credentials = {
    SSH_AUTH_SOCK: agentSock,
    GH_TOKEN: token,
    GITHUB_TOKEN: token,
    GITLAB_TOKEN: token,
    GIT_CONFIG_GLOBAL: gitconfig
  }
  const run = await prbox(home, ["open", remote.path, "--pr", "1"], credentials)
  id = /sandbox ([a-z0-9]{12}) is running/.exec(run.stdout)?.[1] ?? ""
  if (id === "") throw new Error(`open failed: ${run.stdout}${run.stderr}`)
  const printed = await prbox(home, ["ssh-config"])
  expect(printed.code, printed.stderr).toBe(0)
  config = join(home, "ssh", "config")
  control = join(user, "control-%C")
  // The connection stays open (agent forwarding asked) while the sandbox is searched.
  const master = await ssh([
    "-o",
    "ControlMaster=yes",
    "-o",
    "ControlPersist=120",
    "-o",
    "ForwardAgent=yes",
    "-fN",
    `${id}.prbox`
  ])
  expect(master.code, master.stderr).toBe(0)
}, 600_000)

afterAll(async () => {
  if (config !== "") await ssh(["-O", "exit", `${id}.prbox`])
  if (agentPid !== "") process.kill(Number(agentPid))
  await tearDown(home)
  rmSync(user, { recursive: true, force: true })
})

describe("secrets with an ssh connection open", () => {
  it("the dotfiles came in; the connection is open and shared", async () => {
    expect(await inSandbox("readlink ~/.bashrc")).toBe("/home/prbox/dotfiles/.bashrc\n")
    const check = await ssh(["-O", "check", `${id}.prbox`])
    expect(check.code, check.stderr).toBe(0)
  })

  it("no agent: SSH_AUTH_SOCK is unset and no agent socket exists in the container", async () => {
    const env = await inSandbox("env")
    expect(env).not.toMatch(/SSH_AUTH_SOCK|SSH_AGENT_PID/)
    const sockets = await inSandbox("find / -xdev -type s 2>/dev/null || true")
    expect(sockets).not.toMatch(/agent|\/ssh-/)
    expect(sockets).not.toContain(agentSock)
  })

  it("no token, key or git credential in the container's environment, its home, its workspace or /tmp", async () => {
    const env = await inSandbox("env; cat /proc/1/environ | tr '\\0' '\\n'")
    expect(env).not.toContain(token)
    expect(env).not.toMatch(/TOKEN|GIT_CONFIG_GLOBAL/)
    const needles = [token, privateKey, publicKey].map((needle) => `-e '${needle}'`).join(" ")
    const found = await inSandbox(`grep -rlF ${needles} /home /workspace /tmp /root /run /etc 2>/dev/null || true`)
    expect(found).toBe("")
    // No private key at all: the sandbox's own host key reaches its server on stdin, never a file.
    const keys = await inSandbox("grep -rl 'PRIVATE KEY' /home /workspace /tmp /run /etc/ssh 2>/dev/null || true")
    expect(keys).toBe("")
    const git = await inSandbox("git config --global --list 2>/dev/null || true")
    expect(git).not.toMatch(/credential|extraheader/i)
  })
})
