import { execFileSync, type SpawnSyncReturns, spawnSync } from "node:child_process"
import { chmodSync, chownSync, copyFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { SandboxList, SandboxView } from "@prbox/protocol"
import { healthzGitImage } from "../../../packages/engine/test/git-image.ts"
import { isolatedEnv, makeRemote, pushPullRequest, type TestRemote } from "../../../packages/git/test/helpers.ts"
import { type InstalledPackage, installPackage } from "../../../scripts/package/install.ts"
import {
  asUserCommand,
  containersOfHome,
  decode,
  type Run,
  type RunAs,
  runEntry,
  tearDown,
  writeConfig
} from "./support.ts"

/**
 * A host where prboxd runs as a user who is not root but may use Docker (a
 * member of its socket's group), from the installed package (the checkout
 * may sit where that user cannot enter), with its HOME, its PRBOX_HOME and a
 * bare remote in a folder of its own.
 */
export interface NonRootHost {
  readonly user: RunAs
  /** The user's HOME: where a command run on the host as the daemon's user would leave a marker. */
  readonly home: string
  /** Its PRBOX_HOME. */
  readonly state: string
  readonly remote: TestRemote
  /** prbox as the user runs it (the daemon it starts runs as the user too). */
  readonly prbox: (args: ReadonlyArray<string>) => Promise<Run>
  /** `command args` on the host as the daemon's user. */
  readonly asUser: (command: string, args: ReadonlyArray<string>) => SpawnSyncReturns<string>
  /** Moves refs/pull/<pr>/head one commit on (a push by the PR's author); returns the new head. */
  readonly pushTo: (pr: number, from: string) => string
  readonly cleanUp: () => Promise<void>
}

export const HOSTILE_USER = "prbox-hostile"

const idOf = (flag: "-u" | "-g") => Number.parseInt(execFileSync("id", [flag, HOSTILE_USER], { encoding: "utf8" }), 10)

/** The test user (a system user without a home of its own), made once a machine. */
const ensureUser = (): { uid: number; gid: number } => {
  if (spawnSync("id", ["-u", HOSTILE_USER]).status !== 0) {
    const made = spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", HOSTILE_USER], {
      encoding: "utf8"
    })
    // Another test file may have made it meanwhile.
    if (made.status !== 0 && spawnSync("id", ["-u", HOSTILE_USER]).status !== 0) throw new Error(made.stderr)
  }
  return { uid: idOf("-u"), gid: idOf("-g") }
}

const ownedDir = (path: string, owner: { uid: number; gid: number }, mode: number): string => {
  mkdirSync(path, { recursive: true })
  chownSync(path, owner.uid, owner.gid)
  chmodSync(path, mode)
  return path
}

const chownTree = (path: string, owner: { uid: number; gid: number }) =>
  execFileSync("chown", ["-R", `${owner.uid}:${owner.gid}`, path])

export const makeNonRootHost = async (): Promise<NonRootHost> => {
  const owner = ensureUser()
  // Docker's socket lets its group in: the daemon's user is a member, nothing more.
  const dockerGroup = statSync("/var/run/docker.sock").gid
  const prefix = realpathSync(mkdtempSync(join(tmpdir(), "prbox-prefix-")))
  chmodSync(prefix, 0o755)
  const installed: InstalledPackage = await installPackage(prefix)
  const nodeDir = mkdtempSync(join(tmpdir(), "prbox-node-"))
  chmodSync(nodeDir, 0o755)
  copyFileSync(process.execPath, join(nodeDir, "node"))
  chmodSync(join(nodeDir, "node"), 0o755)
  const user: RunAs = { ...owner, groups: [dockerGroup], node: join(nodeDir, "node") }

  const base = ownedDir(realpathSync(mkdtempSync(join(tmpdir(), "prbox-hostile-"))), owner, 0o700)
  const home = ownedDir(join(base, "home"), owner, 0o700)
  const state = ownedDir(join(base, "state"), owner, 0o700)
  const remoteRoot = ownedDir(join(base, "remote"), owner, 0o755)
  const remote = makeRemote(remoteRoot)
  // The repository is trusted: only what its base branch configures gets widened (PR 7, a root user).
  writeConfig(state, { image: healthzGitImage(), trustedRepositories: [`local${remote.path}`] })
  chownSync(join(state, "config.json"), owner.uid, owner.gid)
  pushPullRequest(remote.path, 3, { "pr3.txt": "three\n" })
  pushPullRequest(remote.path, 4, { "pr4.txt": "four\n" })
  // A Dockerfile devcontainer: its rebuild reads the workspace after a container ran in it.
  pushPullRequest(remote.path, 5, {
    ".devcontainer/devcontainer.json": JSON.stringify({ build: { dockerfile: "Dockerfile" } }),
    ".devcontainer/Dockerfile": `FROM ${healthzGitImage()}\nLABEL dev.prbox.test-pr=5\n`
  })
  // Root two ways, each leaving a setuid shell in the workspace and the home from its own setup step:
  // an untrusted image's passwordless sudo (a setuid-root shell), and the trusted repository's root user.
  // `waitFor`: the open answers once that step is done, so what it left is there to look at.
  const leaveRootShells = `cp /bin/sh ./rootsh && chmod 4755 ./rootsh && cp /bin/sh "$HOME/rootsh" && chmod 4755 "$HOME/rootsh"`
  pushPullRequest(remote.path, 6, {
    ".devcontainer/devcontainer.json": JSON.stringify({
      build: { dockerfile: "Dockerfile" },
      postCreateCommand: `sudo-sh -p -c '${leaveRootShells}'`,
      waitFor: "postCreateCommand"
    }),
    ".devcontainer/Dockerfile": `FROM ${healthzGitImage()}\nRUN cp /bin/sh /usr/bin/sudo-sh && chmod 4755 /usr/bin/sudo-sh\n`
  })
  const rootBase = pushPullRequest(remote.path, 7, {
    ".devcontainer/devcontainer.json": JSON.stringify({
      image: healthzGitImage(),
      remoteUser: "root",
      containerUser: "root",
      postCreateCommand: leaveRootShells,
      waitFor: "postCreateCommand"
    })
  })
  execFileSync("git", [`--git-dir=${remote.path}`, "update-ref", "refs/heads/main", rootBase])
  chownTree(remoteRoot, owner)

  const env = { ...process.env, HOME: home, PATH: `${nodeDir}:${process.env.PATH ?? ""}` }
  const asUser = (command: string, args: ReadonlyArray<string>) => {
    const [program, withUser] = asUserCommand(user, command, args)
    return spawnSync(program, withUser, { encoding: "utf8", env, cwd: home })
  }
  const prbox = (args: ReadonlyArray<string>) => runEntry(installed.prbox, state, args, { HOME: home }, user)

  const pushTo = (pr: number, from: string): string => {
    const file = `pushed-${pr}-${Date.now()}.txt`
    const script = [
      `cd '${join(remoteRoot, "remote-work")}'`,
      `git checkout --quiet --detach ${from}`,
      `echo ${file} > ${file}`,
      `git add ${file}`,
      `git commit --quiet -m ${file}`,
      `git push --quiet --force '${remote.path}' HEAD:refs/pull/${pr}/head`,
      "git rev-parse HEAD"
    ].join(" && ")
    const [program, withUser] = asUserCommand(user, "sh", ["-c", script])
    const pushed = spawnSync(program, withUser, { encoding: "utf8", env: { ...env, ...isolatedEnv } })
    if (pushed.status !== 0) throw new Error(`the push failed: ${pushed.stderr}`)
    return pushed.stdout.trim()
  }

  /**
   * Removes every sandbox as the user would (`prbox rm --force`), stops the
   * daemon, then removes what is left. Fails when a container outlived its
   * `rm`; a removal the daemon could not finish (a test's own finding) is
   * printed, and what it left is removed as root.
   */
  const cleanUp = async () => {
    let left: Array<string> = []
    try {
      const listed = await prbox(["ls", "-a", "--json"])
      if (listed.code === 0) {
        for (const sandbox of decode(SandboxList, listed.stdout)) {
          const removed = await prbox(["rm", sandbox.id, "--force"])
          if (removed.code !== 0) console.warn(`prbox rm ${sandbox.id} (${removed.code}): ${removed.stderr.trim()}`)
        }
      }
      const stopped = await prbox(["daemon", "stop"])
      if (stopped.code !== 0) console.warn(`prbox daemon stop (${stopped.code}): ${stopped.stderr.trim()}`)
      left = containersOfHome(state)
    } finally {
      await tearDown(state)
      // The images its PRs' Dockerfiles built are named after its remote's folder: this run's alone.
      const images = execFileSync("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}"], { encoding: "utf8" })
        .split("\n")
        .filter((image) => image.startsWith("prbox-build/") && image.includes(basename(base)))
      if (images.length > 0) spawnSync("docker", ["rmi", ...images], { stdio: "ignore" })
      rmSync(base, { recursive: true, force: true })
      rmSync(nodeDir, { recursive: true, force: true })
      rmSync(prefix, { recursive: true, force: true })
    }
    if (left.length > 0) throw new Error(`containers left after prbox rm and daemon stop: ${left.join(", ")}`)
  }

  return { user, home, state, remote, prbox, asUser, pushTo, cleanUp }
}

/** Opens PR `pr` of the host's remote; the sandbox as `status --json` shows it. */
export const openPr = async (host: NonRootHost, pr: number): Promise<SandboxView> => {
  const opened = await host.prbox(["open", host.remote.path, "--pr", String(pr), "--json"])
  if (opened.code !== 0) throw new Error(`open of PR ${pr} failed (${opened.code}): ${opened.stdout}${opened.stderr}`)
  return decode(SandboxView, opened.stdout)
}

/** Paths below `dir` that `find` (as root) matches with `tests`. */
export const findIn = (dir: string, tests: ReadonlyArray<string>): Array<string> =>
  execFileSync("find", [dir, ...tests], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)
