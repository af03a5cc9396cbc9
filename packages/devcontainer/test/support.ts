import { Effect } from "effect"
import type { RepoFiles } from "../src/index.ts"

/** A repository as a map of repo-relative paths to contents: the pure tests' stand-in for a checkout. */
export const repoFiles = (files: Readonly<Record<string, string>>): RepoFiles => ({
  read: (path) => Effect.succeed(files[path]),
  list: (dir) => {
    const prefix = `${dir}/`
    const children = new Map<string, "file" | "dir">()
    for (const path of Object.keys(files)) {
      if (!path.startsWith(prefix)) continue
      const [name = "", ...rest] = path.slice(prefix.length).split("/")
      children.set(name, rest.length === 0 ? "file" : "dir")
    }
    return Effect.succeed(children.size === 0 ? undefined : [...children].map(([name, type]) => ({ name, type })))
  }
})

/** A ustar archive of `files` (path → text), as a feature's OCI layer holds it; `./` prefixed as `tar -C dir .` writes. */
export const tarOf = (files: Readonly<Record<string, string>>): Uint8Array => {
  const blocks: Array<Uint8Array> = []
  const field = (header: Uint8Array, at: number, length: number, value: string) =>
    header.set(new TextEncoder().encode(value).subarray(0, length), at)
  for (const [path, text] of Object.entries(files)) {
    const content = new TextEncoder().encode(text)
    const header = new Uint8Array(512)
    field(header, 0, 100, `./${path}`)
    field(header, 100, 8, "0000644\0")
    field(header, 124, 12, `${content.length.toString(8).padStart(11, "0")}\0`)
    field(header, 148, 8, "        ")
    header[156] = "0".charCodeAt(0)
    field(header, 257, 6, "ustar\0")
    const sum = header.reduce((total, byte) => total + byte, 0)
    field(header, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `)
    const body = new Uint8Array(Math.ceil(content.length / 512) * 512)
    body.set(content)
    blocks.push(header, body)
  }
  blocks.push(new Uint8Array(1024))
  const out = new Uint8Array(blocks.reduce((total, block) => total + block.length, 0))
  let offset = 0
  for (const block of blocks) {
    out.set(block, offset)
    offset += block.length
  }
  return out
}
