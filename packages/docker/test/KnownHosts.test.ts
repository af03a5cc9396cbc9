import { createHmac, randomBytes } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import { KnownHosts } from "../src/index.ts"

/** A key blob as the SSH wire format has it: the type string, then (here random) key bytes. */
const blob = (type: string): Buffer => {
  const name = Buffer.from(type, "latin1")
  const length = Buffer.alloc(4)
  length.writeUInt32BE(name.length)
  const body = randomBytes(32)
  const bodyLength = Buffer.alloc(4)
  bodyLength.writeUInt32BE(body.length)
  return Buffer.concat([length, name, bodyLength, body])
}

const ed = blob("ssh-ed25519")
const otherEd = blob("ssh-ed25519")
const ecdsa = blob("ecdsa-sha2-nistp256")
const line = (hosts: string, key: Buffer, type = "ssh-ed25519") => `${hosts} ${type} ${key.toString("base64")}`
const hashed = (name: string): string => {
  const salt = randomBytes(20)
  return `|1|${salt.toString("base64")}|${createHmac("sha1", salt).update(name).digest("base64")}`
}

const verdict = (text: string, host: string, port: number, key = ed) =>
  KnownHosts.verifyHostKey(text, host, port, { type: KnownHosts.keyType(key), blob: key })._tag

describe("KnownHosts.verifyHostKey", () => {
  const cases: ReadonlyArray<readonly [string, string, string, number, Buffer, string]> = [
    ["plain host, port 22", line("buildbox", ed), "buildbox", 22, ed, "Trusted"],
    ["host names are case-insensitive", line("BuildBox", ed), "buildbox", 22, ed, "Trusted"],
    ["one of a comma list", line("other,buildbox,10.0.0.5", ed), "10.0.0.5", 22, ed, "Trusted"],
    ["[host]:port for another port", line("[127.0.0.1]:2222", ed), "127.0.0.1", 2222, ed, "Trusted"],
    ["a plain host entry does not vouch for another port", line("127.0.0.1", ed), "127.0.0.1", 2222, ed, "Unknown"],
    ["another port's entry does not vouch for 22", line("[buildbox]:2222", ed), "buildbox", 22, ed, "Unknown"],
    ["hashed host", line(hashed("buildbox"), ed), "buildbox", 22, ed, "Trusted"],
    ["hashed [host]:port", line(hashed("[127.0.0.1]:2222"), ed), "127.0.0.1", 2222, ed, "Trusted"],
    ["hashed entry of another host", line(hashed("elsewhere"), ed), "buildbox", 22, ed, "Unknown"],
    ["wildcard", line("*.example.test", ed), "box.example.test", 22, ed, "Trusted"],
    ["negated pattern excludes", line("*.example.test,!box.example.test", ed), "box.example.test", 22, ed, "Unknown"],
    ["empty file", "", "buildbox", 22, ed, "Unknown"],
    ["comments and blank lines", `# a comment\n\n${line("buildbox", ed)}\n`, "buildbox", 22, ed, "Trusted"],
    ["same type, another key: changed", line("buildbox", otherEd), "buildbox", 22, ed, "Changed"],
    ["hashed, another key: changed", line(hashed("buildbox"), otherEd), "buildbox", 22, ed, "Changed"],
    [
      "known under another type only: changed",
      line("buildbox", ecdsa, "ecdsa-sha2-nistp256"),
      "buildbox",
      22,
      ed,
      "Changed"
    ],
    ["one of several keys", `${line("buildbox", otherEd)}\n${line("buildbox", ed)}`, "buildbox", 22, ed, "Trusted"],
    ["@revoked key", `@revoked ${line("*", ed)}\n${line("buildbox", ed)}`, "buildbox", 22, ed, "Changed"],
    ["@cert-authority is not a host key", `@cert-authority ${line("buildbox", ed)}`, "buildbox", 22, ed, "Unknown"],
    ["a malformed line is skipped", `buildbox ssh-ed25519\n${line("buildbox", ed)}`, "buildbox", 22, ed, "Trusted"]
  ]
  for (const [name, text, host, port, key, expected] of cases) {
    it(name, () => {
      assert.strictEqual(verdict(text, host, port, key), expected)
    })
  }
})

describe("KnownHosts helpers", () => {
  it("names a host as ssh does", () => {
    assert.strictEqual(KnownHosts.hostName("buildbox", 22), "buildbox")
    assert.strictEqual(KnownHosts.hostName("127.0.0.1", 2222), "[127.0.0.1]:2222")
  })

  it("lists the key types known for a host, in file order", () => {
    const text = [line("buildbox", ecdsa, "ecdsa-sha2-nistp256"), line("buildbox", ed), line("other", ed)].join("\n")
    assert.deepStrictEqual(KnownHosts.knownKeyTypes(text, "buildbox", 22), ["ecdsa-sha2-nistp256", "ssh-ed25519"])
    assert.deepStrictEqual(KnownHosts.knownKeyTypes(text, "nowhere", 22), [])
  })

  it("prints a fingerprint as ssh-keygen does (SHA256, unpadded base64)", () => {
    assert.match(KnownHosts.fingerprint(ed), /^SHA256:[A-Za-z0-9+/]{43}$/)
    assert.strictEqual(KnownHosts.keyType(ed), "ssh-ed25519")
  })
})
