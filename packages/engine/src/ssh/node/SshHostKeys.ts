import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type SandboxId, statePaths } from "@prbox/domain"
import type ssh2 from "ssh2"
import { RuntimeError } from "../../Errors.ts"

type Ssh2 = typeof ssh2
// ssh2 holds a 16 MiB WebAssembly heap and Node's TLS once loaded: loaded at the first SSH
// connection (as packages/docker's SshConnection.ts does), so an idle daemon never holds them.
let ssh2Module: Promise<Ssh2> | undefined
const loadSsh2 = (): Promise<Ssh2> => {
  ssh2Module ??= import("ssh2").then((loaded) => ("default" in loaded ? loaded.default : loaded) as Ssh2)
  return ssh2Module
}

const KEY_FILE = "ssh-host-key"

/** Where prbox keeps each sandbox's SSH host key and the `known_hosts` file that pins them. */
export const hostKeyPaths = (home: string) => {
  const paths = statePaths(home)
  return {
    folder: paths.ssh.folder,
    knownHosts: paths.ssh.knownHosts,
    key: (id: SandboxId) => join(paths.sandbox(id).root, KEY_FILE),
    sandboxes: paths.sandboxes
  }
}

const failure = (detail: string, cause: unknown) =>
  new RuntimeError({
    operation: "ssh.host-key",
    detail: `${detail}: ${cause instanceof Error ? cause.message : String(cause)}`
  })

/** The public half of a PEM private key, as `ssh-ed25519 AAAA…`. */
const publicLine = (lib: Ssh2, pem: Buffer): string => {
  const parsed = lib.utils.parseKey(pem)
  if (parsed instanceof Error) throw parsed
  const key = Array.isArray(parsed) ? parsed[0] : parsed
  if (key === undefined) throw new Error("no key")
  return `${key.type} ${key.getPublicSSH().toString("base64")}`
}

/**
 * A new ed25519 key pair ssh2 can read back: about one key in 256 (a
 * public key whose first byte is zero) it writes with a field cut short and
 * then refuses as malformed, so such a key is drawn again.
 */
export const generateKey = (lib: Ssh2, draw = () => lib.utils.generateKeyPairSync("ed25519")) => {
  for (let attempt = 0; attempt < 32; attempt++) {
    const made = draw()
    if (!(lib.utils.parseKey(made.private) instanceof Error)) return made
  }
  throw new Error("no readable host key could be made")
}

/** Writes `text` to `file` (0600) by a rename, so a reader never sees half of it. */
const writePrivately = (file: string, text: string | Buffer) => {
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

/**
 * The sandbox's host key (PEM), made on first use (ed25519) and kept 0600
 * in the sandbox's own folder on the host, which no container sees and
 * `prbox rm` removes. Throws RuntimeError-worthy errors; callers wrap.
 */
export const hostKeyOf = async (home: string, id: SandboxId): Promise<Buffer> => {
  const file = hostKeyPaths(home).key(id)
  try {
    return readFileSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw failure("the sandbox's host key cannot be read", error)
  }
  const made = generateKey(await loadSsh2())
  try {
    writePrivately(file, made.private)
  } catch (error) {
    throw failure("the sandbox's host key cannot be written", error)
  }
  return Buffer.from(made.private)
}

/**
 * Rewrites the `known_hosts` file from the host keys there are: one line
 * `<id>.prbox <key>` per sandbox that has one, so a removed sandbox's line
 * goes with its folder.
 */
export const writeKnownHosts = async (home: string): Promise<void> => {
  const paths = hostKeyPaths(home)
  const lib = await loadSsh2()
  try {
    mkdirSync(paths.folder, { recursive: true, mode: 0o700 })
    const ids = existsSync(paths.sandboxes) ? readdirSync(paths.sandboxes).sort() : []
    const lines = ids.flatMap((id) => {
      const file = paths.key(id as SandboxId)
      if (!existsSync(file)) return []
      return [`${id}.prbox ${publicLine(lib, readFileSync(file))}`]
    })
    writePrivately(paths.knownHosts, lines.map((line) => `${line}\n`).join(""))
  } catch (error) {
    throw failure("prbox's known_hosts file cannot be written", error)
  }
}
