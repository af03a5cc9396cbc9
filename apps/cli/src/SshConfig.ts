/*
 * The OpenSSH side of `prbox ssh`: the `Host *.prbox` block and its
 * `Include` in ~/.ssh/config. Pure: no file is read or written here.
 */

/** A word for the shell OpenSSH runs a ProxyCommand with. */
export const shellWord = (word: string): string =>
  /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`

/** A word for OpenSSH's own config parser (and `-o`): double quotes, where the shell's are single. */
export const configWord = (word: string): string => (/[\s#'"]/.test(word) ? `"${word}"` : word)

/** The sandbox id of an SSH host name `<id>.prbox` (or the bare id), else undefined. */
export const sandboxOfHost = (host: string): string | undefined => {
  const match = /^([a-z0-9]{12})(\.prbox)?$/.exec(host.toLowerCase())
  return match?.[1]
}

export interface SshConfigInput {
  /** How to run this prbox: the Node binary and the CLI's script, absolute. */
  readonly command: ReadonlyArray<string>
  /** `$PRBOX_HOME`, fixed so the proxy reaches this home's daemon whatever the caller's environment. */
  readonly home: string
  readonly knownHosts: string
}

/** The ProxyCommand and the pinning, as `-o` options or config lines. */
export const sshOptions = (input: SshConfigInput): ReadonlyArray<readonly [string, string]> => [
  ["ProxyCommand", ["env", `PRBOX_HOME=${input.home}`, ...input.command, "ssh-proxy", "%h"].map(shellWord).join(" ")],
  ["UserKnownHostsFile", configWord(input.knownHosts)],
  ["StrictHostKeyChecking", "yes"],
  // The sandbox's server offers these; GCM first, as the server runs it fastest (OpenSSH would pick CTR and a MAC).
  ["Ciphers", "aes128-gcm@openssh.com,aes256-gcm@openssh.com,aes128-ctr,aes256-ctr"],
  ["ForwardAgent", "no"],
  ["ForwardX11", "no"]
]

/** One `Host *.prbox` block. */
export const sshConfigBlock = (input: SshConfigInput): string =>
  [
    "# prbox: every sandbox as <id>.prbox, over prboxd's socket (no port is opened)",
    "Host *.prbox",
    ...sshOptions(input).map(([key, value]) => `  ${key} ${value}`),
    ""
  ].join("\n")

/**
 * ~/.ssh/config with `Include <file>` as its first line, or undefined when
 * it already includes it. The Include goes first: an Include after a `Host`
 * line would belong to that host only.
 */
export const withInclude = (current: string, file: string): string | undefined => {
  const line = `Include ${configWord(file)}`
  const lines = current.split("\n").map((text) => text.trim())
  if (lines.includes(line)) return undefined
  return `${line}\n${current.length === 0 || current.startsWith("\n") ? "" : "\n"}${current}`
}
