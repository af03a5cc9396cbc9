import { describe, expect, it } from "vitest"
import { configWord, sandboxOfHost, shellWord, sshConfigBlock, withInclude } from "../src/SshConfig.ts"

describe("ssh-config: the pure parts", () => {
  it.each([
    ["abcdef123456.prbox", "abcdef123456"],
    ["ABCDEF123456.prbox", "abcdef123456"],
    ["abcdef123456", "abcdef123456"],
    ["abcdef12345.prbox", undefined],
    ["abcdef123456.prbox.evil", undefined],
    ["../abcdef1234.prbox", undefined]
  ])("host %s names sandbox %s", (host, id) => {
    expect(sandboxOfHost(host)).toBe(id)
  })

  it.each([
    ["/usr/bin/node", "/usr/bin/node"],
    ["/home/a b/prbox", "'/home/a b/prbox'"],
    ["it's", "'it'\\''s'"],
    ["$(rm -rf ~)", "'$(rm -rf ~)'"]
  ])("quotes %s for the ProxyCommand's shell as %s", (word, quoted) => {
    expect(shellWord(word)).toBe(quoted)
  })

  it.each([
    ["/h/ssh/known_hosts", "/h/ssh/known_hosts"],
    ["/home/a b/.prbox/ssh/known_hosts", '"/home/a b/.prbox/ssh/known_hosts"']
  ])("quotes %s for OpenSSH's config as %s", (word, quoted) => {
    expect(configWord(word)).toBe(quoted)
  })

  it("prints one Host *.prbox block pinning prbox's known_hosts", () => {
    expect(sshConfigBlock({ command: ["/n/node", "/p/main.ts"], home: "/h", knownHosts: "/h/ssh/known_hosts" })).toBe(
      [
        "# prbox: every sandbox as <id>.prbox, over prboxd's socket (no port is opened)",
        "Host *.prbox",
        "  ProxyCommand env PRBOX_HOME=/h /n/node /p/main.ts ssh-proxy %h",
        "  UserKnownHostsFile /h/ssh/known_hosts",
        "  StrictHostKeyChecking yes",
        "  Ciphers aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes256-ctr",
        "  ForwardAgent no",
        "  ForwardX11 no",
        ""
      ].join("\n")
    )
  })

  it.each([
    ["", "Include /h/ssh/config\n"],
    ["Host x\n  User y\n", "Include /h/ssh/config\n\nHost x\n  User y\n"],
    ["Include /h/ssh/config\nHost x\n", undefined],
    ["Host x\n  Include /h/ssh/config\n", undefined]
  ])("adds the Include once, first: %j", (current, next) => {
    expect(withInclude(current, "/h/ssh/config")).toBe(next)
  })
})
