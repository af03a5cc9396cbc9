import { execFileSync, spawnSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { statePaths } from "@prbox/domain"
import type { SandboxView } from "@prbox/protocol"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { folderSnapshot as snapshot } from "../../../scripts/testing/snapshot.ts"
import { findIn, makeNonRootHost, type NonRootHost, openPr } from "./hostile-nonroot-support.ts"

/**
 * The hostile sandbox against a daemon that is not root (a member of
 * Docker's group, run from the installed package): what the PR's code, or
 * root in its container, does in the workspace and the home must not act on
 * the host, not even as the daemon's own user.
 */

let host: NonRootHost

beforeAll(async () => {
  host = await makeNonRootHost()
}, 600_000)

afterAll(async () => {
  await host.cleanUp()
}, 300_000)

/** `script` as root in the sandbox's container (an image's sudo). */
const asRootIn = (sandbox: SandboxView, script: string) =>
  spawnSync("docker", ["exec", "-u", "0", sandbox.containerId ?? "", "sh", "-c", script], { encoding: "utf8" })

/** The container's workspace folder and home, as its own shell says. */
const foldersOf = async (sandbox: SandboxView): Promise<{ workspace: string; home: string }> => {
  const where = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", 'pwd; echo "$HOME"'])
  expect(where.code, where.stderr).toBe(0)
  const [workspace = "", home = ""] = where.stdout.trim().split("\n")
  return { workspace, home }
}

describe("a non-root daemon's sandbox that rewrites its workspace's object files", () => {
  it("leaves the daemon's mirror as it was: same bytes, and git fsck --strict is clean", async () => {
    const sandbox = await openPr(host, 2)
    const mirrors = statePaths(host.state).mirrors
    const before = snapshot(mirrors)
    expect(Object.keys(before).length).toBeGreaterThan(0)
    const attack = await host.prbox([
      "exec",
      sandbox.id,
      "--",
      "sh",
      "-c",
      "cd .git/objects && n=0 && for f in $(find . -type f); do chmod u+w $f && printf X >> $f && n=$((n+1)); done; echo $n"
    ])
    expect(attack.code, attack.stderr).toBe(0)
    expect(Number.parseInt(attack.stdout.trim(), 10), "the attack wrote no object file").toBeGreaterThan(0)
    expect(snapshot(mirrors)).toEqual(before)
    const repositories = findIn(mirrors, ["-type", "d", "-name", "objects", "-printf", "%h\n"]).filter(
      (dir) => existsSync(join(dir, "HEAD")) && existsSync(join(dir, "refs"))
    )
    expect(repositories.length).toBeGreaterThan(0)
    for (const mirror of repositories) {
      const fsck = host.asUser("git", [`--git-dir=${mirror}`, "fsck", "--strict", "--no-progress"])
      expect(fsck.status, `${mirror}: ${fsck.stdout}${fsck.stderr}`).toBe(0)
    }
  }, 120_000)
})

describe("a non-root daemon's sandbox that plants git config and hooks in its workspace", () => {
  it("update, diff --base, rebuild, stop, restart, reconcile, gc, rm and prune run none of it on the host", async () => {
    const sandbox = await openPr(host, 1)
    // What a planted command leaves: a marker in the daemon's user's HOME and in root's (paths the
    // container does not have), and one in $HOME (the container's home there, the user's on the host).
    const token = `pwned-${randomBytes(4).toString("hex")}`
    const run = (name: string) =>
      `touch ${join(host.home, `${token}-${name}`)} /root/${token}-${name} 2>/dev/null; touch "$HOME/${token}-ran-${name}"`
    const hooks = ["post-merge", "post-checkout", "reference-transaction", "post-rewrite", "post-index-change"]
    const hook = (name: string, path: string) =>
      `printf '#!/bin/sh\\n%s\\nexit 0\\n' '${run(name)}' > ${path} && chmod +x ${path}`
    const plant = [
      `git config core.fsmonitor '${run("fsmonitor")}; false'`,
      // Inside .git: the workspace stays clean, so update goes ahead.
      "mkdir -p .git/planted",
      ...hooks.map((name) => hook(`hooksPath-${name}`, `.git/planted/${name}`)),
      ...hooks.map((name) => hook(`hooks-${name}`, `.git/hooks/${name}`)),
      "git config core.hooksPath .git/planted",
      `git config diff.external '${run("diff-external")}'`
    ].join(" && ")
    const planted = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", plant])
    expect(planted.code, planted.stderr).toBe(0)
    host.pushTo(1, host.remote.pr1)

    const outcomes: Array<string> = []
    const steps = async (...commands: ReadonlyArray<ReadonlyArray<string>>) => {
      for (const command of commands) {
        const done = await host.prbox(command)
        outcomes.push(`${command.join(" ")}: ${done.code}${done.code === 0 ? "" : ` ${done.stderr.trim()}`}`)
      }
    }
    await steps(
      ["update", sandbox.id],
      ["diff", sandbox.id, "--base"],
      ["diff", sandbox.id],
      ["rebuild", sandbox.id],
      ["stop", sandbox.id],
      ["restart", sandbox.id],
      ["reconcile"]
    )
    // The plants are live: the container's own git ran them (their markers are in its home).
    const ran = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", `ls "$HOME" | grep -c ${token}-ran- || true`])
    await steps(["stop", sandbox.id], ["gc", "--yes"], ["rm", sandbox.id, "--force"], ["prune", "--yes"])

    const found = [host.home, "/root"].flatMap((dir) => readdirSync(dir).filter((name) => name.startsWith(token)))
    expect(found, `a planted command ran on the host; steps: ${outcomes.join("; ")}`).toEqual([])
    expect(Number.parseInt(ran.stdout, 10), "no planted hook ran in the container").toBeGreaterThan(0)
    for (const step of ["update", "rebuild", "restart", "rm"]) {
      expect(outcomes.find((outcome) => outcome.startsWith(`${step} `))).toMatch(/: 0$/)
    }
  }, 300_000)
})

/**
 * Each knob of the workspace's git that would run a command, alone, on the
 * host paths that touch a workspace (update, diff --base, restart, rm): a
 * marker in the daemon's user's HOME (or root's), paths the container does
 * not have, says the host ran it. `MARK` is replaced by the marker's touch.
 */
const KNOBS: ReadonlyArray<readonly [string, string]> = [
  ["core.fsmonitor", "git config core.fsmonitor 'MARK; false'"],
  [
    "core.hooksPath",
    "mkdir -p .git/p && printf '#!/bin/sh\\nMARK\\n' > .git/p/post-merge && chmod +x .git/p/post-merge && git config core.hooksPath .git/p"
  ],
  [
    "a clean/smudge filter",
    "printf '* filter=x\\n' > .git/info/attributes && git config filter.x.clean 'MARK; cat' && git config filter.x.smudge 'MARK; cat'"
  ],
  [
    "url.insteadOf with ext::",
    "git config protocol.ext.allow always && git config url.'ext::sh -c MARK% #'.insteadOf /"
  ],
  ["include.path", "printf '[core]\\n\\tfsmonitor = \"MARK; false\"\\n' > .git/inc && git config include.path inc"],
  ["core.sshCommand", "git config core.sshCommand 'MARK; false' && git remote set-url origin ssh://h/x"],
  ["diff.external", "git config diff.external 'MARK'"],
  ["a .git that is a link", 'mv .git "$HOME/g" && ln -s "$HOME/g" .git && git config core.fsmonitor \'MARK; false\''],
  [
    "a .git that is a file",
    'mv .git "$HOME/g" && echo "gitdir: $HOME/g" > .git && git config core.fsmonitor \'MARK; false\''
  ]
]

describe("each git knob a non-root daemon's sandbox plants, alone", () => {
  for (const [knob, plant] of KNOBS) {
    it(`${knob}: update, diff --base, restart and rm run nothing on the host`, async () => {
      const sandbox = await openPr(host, 1)
      const token = `knob-${randomBytes(4).toString("hex")}`
      const mark = `touch ${join(host.home, token)} /root/${token} 2>/dev/null`
      const planted = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", plant.replaceAll("MARK", mark)])
      expect(planted.code, planted.stderr).toBe(0)
      host.pushTo(1, host.remote.pr1)
      const outcomes: Array<string> = []
      for (const command of [
        ["update", sandbox.id],
        ["diff", sandbox.id, "--base"],
        ["restart", sandbox.id]
      ]) {
        const done = await host.prbox(command)
        outcomes.push(`${command[0]}: ${done.code}`)
      }
      expect((await host.prbox(["rm", sandbox.id, "--force"])).code).toBe(0)
      const found = [host.home, "/root"].filter((dir) => existsSync(join(dir, token)))
      expect(found, `the host ran the planted ${knob} (${outcomes.join(", ")})`).toEqual([])
    }, 120_000)
  }
})

describe("root in a non-root daemon's sandbox, against the daemon's user", () => {
  let sandbox: SandboxView
  let folders: { workspace: string; home: string }

  beforeAll(async () => {
    sandbox = await openPr(host, 3)
    folders = await foldersOf(sandbox)
  }, 180_000)

  it("a setuid copy of a shell left in the workspace and the home gives the daemon's user no root", async () => {
    for (const folder of [folders.workspace, folders.home]) {
      const left = asRootIn(sandbox, `cp /bin/sh ${folder}/rootsh && chmod 4755 ${folder}/rootsh`)
      expect(left.status, left.stderr).toBe(0)
    }
    // Wherever the host keeps them: found as root, then run as the daemon's user.
    const copies = findIn(host.state, ["-name", "rootsh"])
    expect(copies.length, "no copy of the setuid shell under PRBOX_HOME").toBeGreaterThan(0)
    const runs = copies.map((path) => {
      const run = host.asUser("/bin/sh", ["-c", `'${path}' -p -c 'id -u'`])
      return { path, status: run.status, euid: run.stdout.trim(), stderr: run.stderr.trim() }
    })
    expect(runs.filter((run) => run.euid === "0")).toEqual([])
  })

  it("cannot make a device node in the workspace or the home", () => {
    for (const folder of [folders.workspace, folders.home]) {
      const made = asRootIn(sandbox, `mknod ${folder}/null c 1 3`)
      expect(made.status, `mknod in ${folder} succeeded`).not.toBe(0)
    }
    expect(findIn(host.state, ["(", "-type", "c", "-o", "-type", "b", ")"])).toEqual([])
  })

  it("rm, after root's setuid files and links planted out of it: no file of the sandbox is left, no link followed", async () => {
    await removesCleanly(sandbox, [])
  })
})

describe("root two ways in a non-root daemon's sandbox, from its own setup step", () => {
  const cases: ReadonlyArray<readonly [string, number]> = [
    ["an untrusted image's passwordless sudo", 6],
    ["the trusted repository's root user", 7]
  ]
  for (const [way, pr] of cases) {
    it(`${way}: the setuid shells it leaves give the daemon's user no root`, async () => {
      const sandbox = await openPr(host, pr)
      expect(sandbox.setupError ?? null, "the setup step did not run").toBeNull()
      const copies = findIn(statePaths(host.state).sandbox(sandbox.id).root, ["-name", "rootsh"])
      expect(copies, "the setup step left no setuid shell").toHaveLength(2)
      // Root's, as the host sees them (no user namespace): setuid root shells, nothing less.
      for (const path of copies) expect([lstatSync(path).uid, lstatSync(path).mode & 0o4000], path).toEqual([0, 0o4000])
      const runs = copies.map((path) => host.asUser("/bin/sh", ["-c", `'${path}' -p -c 'id -u'`]).stdout.trim())
      expect(runs.filter((euid) => euid === "0")).toEqual([])
      expect((await host.prbox(["rm", sandbox.id, "--force"])).code).toBe(0)
      expect(existsSync(statePaths(host.state).sandbox(sandbox.id).root)).toBe(false)
    }, 180_000)
  }
})

describe("a non-root daemon's rm of a sandbox where root made a folder (an image's sudo mkdir, sudo npm install)", () => {
  it("leaves no file of the sandbox under PRBOX_HOME, and follows no link in that folder", async () => {
    const sandbox = await openPr(host, 4)
    const { workspace, home } = await foldersOf(sandbox)
    await removesCleanly(sandbox, [
      `mkdir ${workspace}/rootdir ${home}/rootdir`,
      `ln -s ${outside()} ${workspace}/rootdir/link-out`,
      `ln -s ${outside()} ${home}/rootdir/link-out`,
      `touch ${workspace}/rootdir/file ${home}/rootdir/file`
    ])
  }, 120_000)
})

/** A folder of the daemon's user's HOME, with a canary file: what a removal that followed a link would empty. */
const outside = () => join(host.home, "precious")

/**
 * Plants links to `outside()` in the sandbox's workspace and home (as its
 * user), runs `asRoot` in its container, then removes it as the user would:
 * nothing of it is left under PRBOX_HOME, the mirror stays, and the user's
 * HOME is as it was.
 */
const removesCleanly = async (sandbox: SandboxView, asRoot: ReadonlyArray<string>) => {
  mkdirSync(outside(), { recursive: true })
  writeFileSync(join(outside(), "canary"), "canary\n")
  execFileSync("chown", ["-R", `${host.user.uid}:${host.user.gid}`, outside()])
  const before = snapshot(host.home)
  const planted = [
    `ln -s ${outside()} link-out`,
    `ln -s ${outside()}/canary canary-link`,
    `ln -s ${outside()} "$HOME/link-out"`
  ]
  const linked = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", planted.join(" && ")])
  expect(linked.code, linked.stderr).toBe(0)
  if (asRoot.length > 0) {
    const rooted = asRootIn(sandbox, asRoot.join(" && "))
    expect(rooted.status, rooted.stderr).toBe(0)
  }
  const removed = await host.prbox(["rm", sandbox.id, "--force"])
  // What is left of it, each folder once (not what is in it).
  const left = findIn(host.state, ["-path", `*${sandbox.id}*`, "-prune"])
  const listed = await host.prbox(["ls", "-a"])
  expect(
    { code: removed.code, left },
    `prbox rm printed: ${removed.stdout}${removed.stderr}; prbox ls -a: ${listed.stdout}`
  ).toEqual({ code: 0, left: [] })
  expect(
    findIn(host.state, ["(", "-name", "rootsh", "-o", "-name", "link-out", "-o", "-name", "rootdir", ")"])
  ).toEqual([])
  if (sandbox.workspacePath !== null) expect(existsSync(sandbox.workspacePath)).toBe(false)
  expect(findIn(statePaths(host.state).mirrors, ["-name", "HEAD"]).length).toBeGreaterThan(0)
  expect(lstatSync(join(outside(), "canary")).isFile()).toBe(true)
  expect(snapshot(host.home)).toEqual(before)
}

describe("a non-root daemon's sealed sandbox", () => {
  it("is rebuilt from a stopped sandbox's Dockerfile, read through the engine: its folder is not the daemon's to enter", async () => {
    const sandbox = await openPr(host, 5)
    expect(sandbox.environment?.kind).toBe("devcontainer")
    const sealed = statePaths(host.state).sandbox(sandbox.id).sealed ?? ""
    expect(host.asUser("ls", [sealed]).status, "the daemon's user can enter the sealed folder").not.toBe(0)
    // An edit made in the sandbox is what the rebuild builds.
    const edit = "printf 'LABEL dev.prbox.test-edit=1\\n' >> .devcontainer/Dockerfile"
    const edited = await host.prbox(["exec", sandbox.id, "--", "sh", "-c", edit])
    expect(edited.code, edited.stderr).toBe(0)
    expect((await host.prbox(["stop", sandbox.id])).code).toBe(0)
    const rebuilt = await host.prbox(["rebuild", sandbox.id])
    expect(rebuilt.code, `${rebuilt.stdout}${rebuilt.stderr}`).toBe(0)
    const status = await host.prbox(["status", sandbox.id, "--json"])
    const after = JSON.parse(status.stdout) as SandboxView
    expect(after.status).toBe("running")
    const labels = execFileSync(
      "docker",
      ["image", "inspect", "-f", "{{json .Config.Labels}}", after.environment?.image ?? ""],
      {
        encoding: "utf8"
      }
    )
    expect(labels).toContain("dev.prbox.test-edit")
  }, 180_000)
})
