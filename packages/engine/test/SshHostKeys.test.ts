import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SandboxId } from "@prbox/domain"
import ssh2 from "ssh2"
import { afterEach, describe, expect, it } from "vitest"
import { generateKey, hostKeyOf, writeKnownHosts } from "../src/ssh/node/SshHostKeys.ts"

const homes: Array<string> = []
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true })
})

const makeHome = () => {
  const home = mkdtempSync(join(tmpdir(), "prbox-hostkeys-"))
  homes.push(home)
  return home
}

// A key ssh2 writes with a public key starting with a zero byte, which it then cannot read (found by drawing 5000).
const UNREADABLE =
  "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMgAAAAtz\nc2gtZWQyNTUxOQAAAB+JPQoehyL8HmgBo/eTTmzUpD1dbQWfFH2HC0Yg+nRAAAAA\niL3QNsi90DbIAAAAC3NzaC1lZDI1NTE5AAAAH4k9Ch6HIvweaAGj95NObNSkPV1t\nBZ8UfYcLRiD6dEAAAAA/5wMSMIqKrI1CltXh+cjuHJB71bt5cAPl53mnUPE1K9aJ\nPQoehyL8HmgBo/eTTmzUpD1dbQWfFH2HC0Yg+nRAAAAAAAECAwQFBgc=\n-----END OPENSSH PRIVATE KEY-----\n"

describe("SSH host keys", () => {
  it("draws again when ssh2 made a key it cannot read back", () => {
    // The second draw is a key known to read back: a fresh one is unreadable about one time in 256 itself.
    let readable = ssh2.utils.generateKeyPairSync("ed25519")
    while (ssh2.utils.parseKey(readable.private) instanceof Error) readable = ssh2.utils.generateKeyPairSync("ed25519")
    let draws = 0
    const made = generateKey(ssh2, () => {
      draws++
      return draws === 1 ? { private: UNREADABLE, public: "" } : readable
    })
    expect(draws).toBe(2)
    expect(made).toBe(readable)
  })

  it("makes a sandbox's key once (0600) and pins it in known_hosts; a removed sandbox's line goes", async () => {
    const home = makeHome()
    const id = "abcdefabcdef" as SandboxId
    mkdirSync(join(home, "sandboxes", id), { recursive: true })
    const key = await hostKeyOf(home, id)
    expect((await hostKeyOf(home, id)).equals(key)).toBe(true)
    expect(statSync(join(home, "sandboxes", id, "ssh-host-key")).mode & 0o777).toBe(0o600)
    await writeKnownHosts(home)
    const parsed = ssh2.utils.parseKey(key)
    if (parsed instanceof Error || Array.isArray(parsed)) throw new Error("unreadable key")
    const line = `${id}.prbox ssh-ed25519 ${parsed.getPublicSSH().toString("base64")}\n`
    expect(readFileSync(join(home, "ssh", "known_hosts"), "utf8")).toBe(line)
    rmSync(join(home, "sandboxes", id), { recursive: true })
    await writeKnownHosts(home)
    expect(readFileSync(join(home, "ssh", "known_hosts"), "utf8")).toBe("")
  })
})
