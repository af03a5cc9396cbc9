import { existsSync, readFileSync } from "node:fs"
import { homedir, userInfo } from "node:os"
import { join } from "node:path"
import type ssh2 from "ssh2"
import { fingerprint, type HostKeyVerdict, hostName, keyType, knownKeyTypes, verifyHostKey } from "./KnownHosts.ts"

/**
 * One SSH connection to an engine's host, made when first needed and made
 * again on the next use after it dropped. The server's key must be the one
 * known_hosts records; the user is authenticated by the agent
 * (SSH_AUTH_SOCK), then by identity files. Failures are SshRefusal, whose
 * message is safe to show (no key material).
 */

export interface SshAddress {
  readonly user: string
  readonly host: string
  readonly port: number
}

/** `ssh://[user@]host[:port]` (ssh's defaults: the local user, port 22); undefined for anything else. */
export const parseSshAddress = (address: string): SshAddress | undefined => {
  const url = URL.parse(address)
  if (url === null || url.protocol !== "ssh:" || url.hostname === "" || url.password !== "") return undefined
  if (url.pathname !== "" && url.pathname !== "/") return undefined
  return {
    user: url.username === "" ? userInfo().username : decodeURIComponent(url.username),
    host: url.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: url.port === "" ? 22 : Number(url.port)
  }
}

/** The address as the user writes it (`ssh://me@buildbox:2222`, an IPv6 host in brackets), for messages. */
export const addressLabel = ({ user, host, port }: SshAddress): string =>
  `ssh://${user}@${host.includes(":") ? `[${host}]` : host}${port === 22 ? "" : `:${port}`}`

/**
 * Why SSH failed: the host's key is not trusted, no key was accepted, the
 * host could not be reached, or (a forward) nothing listens on the port it named.
 */
export type SshRefusalKind = "host-key" | "auth" | "unreachable" | "refused"

export class SshRefusal extends Error {
  readonly kind: SshRefusalKind
  constructor(kind: SshRefusalKind, message: string) {
    super(message)
    this.kind = kind
    this.name = "SshRefusal"
  }
}

export interface SshConnectionOptions {
  readonly address: SshAddress
  /** Default `~/.ssh/known_hosts`. */
  readonly knownHostsFile?: string | undefined
  /** Only this key file; default: `~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`, those that exist. */
  readonly identityFile?: string | undefined
  /** The ssh-agent socket; default `$SSH_AUTH_SOCK`. */
  readonly agentSocket?: string | undefined
  readonly keepaliveIntervalMs?: number | undefined
  readonly readyTimeoutMs?: number | undefined
}

export interface SshConnection {
  /** The connection, made (or made again) when there is none; rejects with SshRefusal. */
  readonly client: () => Promise<ssh2.Client>
  /** Forgets `client` (it failed): the next `client()` connects again. */
  readonly drop: (client: ssh2.Client) => void
  /** Resolves when the connection of the moment has closed (at once when there is none). */
  readonly closed: () => Promise<void>
  /** How many connections reached `ready`. */
  readonly connections: () => number
  readonly close: () => void
}

const HOST_KEY_ALGORITHMS: ReadonlyArray<ssh2.ServerHostKeyAlgorithm> = [
  "ssh-ed25519",
  "ecdsa-sha2-nistp256",
  "ecdsa-sha2-nistp384",
  "ecdsa-sha2-nistp521",
  "rsa-sha2-512",
  "rsa-sha2-256",
  "ssh-rsa"
]

/** The host key algorithms, those of the types known_hosts has for the host first (what ssh does). */
const hostKeyAlgorithms = (knownTypes: ReadonlyArray<string>): Array<ssh2.ServerHostKeyAlgorithm> => {
  const known = (algorithm: string) =>
    knownTypes.includes(algorithm) || (algorithm.startsWith("rsa-sha2-") && knownTypes.includes("ssh-rsa"))
  return [...HOST_KEY_ALGORITHMS.filter(known), ...HOST_KEY_ALGORITHMS.filter((algorithm) => !known(algorithm))]
}

const readText = (path: string): string => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return ""
  }
}

const hostKeyRefusal = (
  verdict: Exclude<HostKeyVerdict, { _tag: "Trusted" }>,
  { host, port }: SshAddress,
  blob: Buffer,
  file: string
): SshRefusal => {
  const name = hostName(host, port)
  const presented = `${keyType(blob)} key ${fingerprint(blob)}`
  if (verdict._tag === "Unknown") {
    const scan = `ssh-keyscan ${port === 22 ? "" : `-p ${port} `}${host} >> ${file}`
    return new SshRefusal(
      "host-key",
      `${name} is not in ${file} (it presented the ${presented}); refusing to connect. If that is the engine host's ` +
        `key, add it with \`${scan}\`, then check that \`ssh-keygen -lF '${name}' -f ${file}\` shows that fingerprint`
    )
  }
  const why = verdict.revoked ? `is marked @revoked in ${file}` : `is not the one ${file} records for it`
  return new SshRefusal(
    "host-key",
    `the host key of ${name} has CHANGED: its ${presented} ${why}; refusing to connect. Someone may be intercepting ` +
      `the connection, or the host was reinstalled: once you know the new key is right, remove the old one with ` +
      `\`ssh-keygen -R '${name}' -f ${file}\` and add the new one`
  )
}

const DEFAULT_IDENTITIES = ["id_ed25519", "id_ecdsa", "id_rsa"]

type Ssh2 = typeof ssh2
// ssh2 brings a 16 MiB WebAssembly heap (its poly1305): loaded at the first connection, so a daemon on
// a local socket never holds it.
let ssh2Module: Promise<Ssh2> | undefined
const loadSsh2 = (): Promise<Ssh2> => {
  ssh2Module ??= import("ssh2").then((loaded) => ("default" in loaded ? loaded.default : loaded) as Ssh2)
  return ssh2Module
}

/** The ways to authenticate, and their names for a refusal's message (paths, never key material). */
const authMethods = (lib: Ssh2, options: SshConnectionOptions, username: string) => {
  const methods: Array<ssh2.AnyAuthMethod> = []
  const offered: Array<string> = []
  const agent = options.agentSocket ?? process.env.SSH_AUTH_SOCK
  if (agent !== undefined && agent !== "") {
    methods.push({ type: "agent", username, agent })
    offered.push("the ssh-agent (SSH_AUTH_SOCK)")
  }
  const files =
    options.identityFile === undefined
      ? DEFAULT_IDENTITIES.map((name) => join(homedir(), ".ssh", name)).filter((path) => existsSync(path))
      : [options.identityFile]
  for (const file of files) {
    const key = readText(file)
    // An encrypted key cannot be used without its passphrase: the agent has to hold it.
    if (key === "" || lib.utils.parseKey(key) instanceof Error) continue
    methods.push({ type: "publickey", username, key })
    offered.push(file)
  }
  return { methods, offered }
}

export const makeSshConnection = (options: SshConnectionOptions): SshConnection => {
  const { address } = options
  const label = addressLabel(address)
  const knownHostsFile = options.knownHostsFile ?? join(homedir(), ".ssh", "known_hosts")
  let current:
    | { readonly client: ssh2.Client; readonly ready: Promise<ssh2.Client>; readonly closed: Promise<void> }
    | undefined
  let closed = false
  let connections = 0

  const drop = (client: ssh2.Client): void => {
    if (current?.client === client) current = undefined
    client.end()
  }

  let lib: Ssh2 | undefined
  const connect = (): Promise<ssh2.Client> => {
    if (closed) return Promise.reject(new SshRefusal("unreachable", `${label}: the connection was closed`))
    if (current !== undefined) return current.ready
    if (lib === undefined) {
      return loadSsh2().then((loaded) => {
        lib = loaded
        return connect()
      })
    }
    const { methods, offered } = authMethods(lib, options, address.user)
    if (methods.length === 0) {
      return Promise.reject(
        new SshRefusal(
          "auth",
          `${label}: no SSH key to offer: no ssh-agent (SSH_AUTH_SOCK) and ${
            options.identityFile ?? "none of ~/.ssh/id_ed25519, id_ecdsa, id_rsa"
          } usable (an encrypted key must be added to the agent)`
        )
      )
    }
    const knownHosts = readText(knownHostsFile)
    let refusal: SshRefusal | undefined
    const client = new lib.Client()
    // Each open channel listens for the connection's close (SshTransport.ts): no fixed bound fits.
    client.setMaxListeners(0)
    const ready = new Promise<ssh2.Client>((resolve, reject) => {
      client.on("ready", () => {
        connections += 1
        resolve(client)
      })
      client.on("error", (error: Error & ssh2.ClientErrorExtensions) => {
        drop(client)
        if (refusal !== undefined) return reject(refusal)
        if (error.level === "client-authentication") {
          return reject(
            new SshRefusal(
              "auth",
              `${label}: the server accepted none of the keys offered (${offered.join(", ")}); check the user ` +
                `name and that one of these keys is in that user's authorized_keys`
            )
          )
        }
        reject(new SshRefusal("unreachable", `${label}: ${error.message}`))
      })
      client.on("close", () => {
        if (current?.client === client) current = undefined
        reject(new SshRefusal("unreachable", `${label}: the connection closed before it was ready`))
      })
    })
    // An unused rejection is not an unhandled one: callers hold `ready` only while they wait.
    ready.catch(() => {})
    const whenClosed = new Promise<void>((resolve) => client.once("close", () => resolve()))
    current = { client, ready, closed: whenClosed }
    client.connect({
      host: address.host,
      port: address.port,
      username: address.user,
      authHandler: methods,
      hostVerifier: (blob: Buffer) => {
        const verdict = verifyHostKey(knownHosts, address.host, address.port, { type: keyType(blob), blob })
        if (verdict._tag === "Trusted") return true
        refusal = hostKeyRefusal(verdict, address, blob, knownHostsFile)
        return false
      },
      algorithms: { serverHostKey: hostKeyAlgorithms(knownKeyTypes(knownHosts, address.host, address.port)) },
      keepaliveInterval: options.keepaliveIntervalMs ?? 10_000,
      keepaliveCountMax: 3,
      readyTimeout: options.readyTimeoutMs ?? 20_000
    })
    return ready
  }

  return {
    client: connect,
    drop,
    closed: () => current?.closed ?? Promise.resolve(),
    connections: () => connections,
    close: () => {
      closed = true
      if (current !== undefined) drop(current.client)
    }
  }
}
