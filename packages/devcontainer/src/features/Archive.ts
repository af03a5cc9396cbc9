// A feature arrives as a tar archive (an OCI layer, or a .tgz once
// decompressed). Only devcontainer-feature.json is read from it on the host,
// in memory; the archive itself is unpacked by the image build, inside the
// build's container, never on the host.

/** A regular file of a tar archive. */
export interface ArchiveFile {
  readonly path: string
  readonly content: Uint8Array
}

const text = (bytes: Uint8Array, start: number, length: number): string => {
  const field = bytes.subarray(start, start + length)
  const end = field.indexOf(0)
  return new TextDecoder().decode(end === -1 ? field : field.subarray(0, end))
}

const octal = (bytes: Uint8Array, start: number, length: number): number => {
  const value = text(bytes, start, length).trim()
  return value === "" ? 0 : Number.parseInt(value, 8)
}

/** `./a/b` and `a/b` name the same entry. */
export const normaliseEntry = (path: string): string => path.replace(/^(\.\/)+/, "").replace(/\/+$/, "")

/**
 * The regular files of a ustar/pax archive, or why it is not one. pax
 * headers' `path` is honoured; links and devices are skipped (the build
 * unpacks them inside its container).
 */
export const archiveFiles = (
  bytes: Uint8Array
):
  | { readonly ok: true; readonly files: ReadonlyArray<ArchiveFile> }
  | { readonly ok: false; readonly detail: string } => {
  const files: Array<ArchiveFile> = []
  let offset = 0
  let paxPath: string | undefined
  while (offset + 512 <= bytes.length) {
    const header = bytes.subarray(offset, offset + 512)
    if (header.every((byte) => byte === 0)) return { ok: true, files }
    const size = octal(header, 124, 12)
    const type = String.fromCharCode(header[156] ?? 0)
    const prefix = text(header, 345, 155)
    const name = paxPath ?? (prefix === "" ? text(header, 0, 100) : `${prefix}/${text(header, 0, 100)}`)
    paxPath = undefined
    const start = offset + 512
    if (Number.isNaN(size) || start + size > bytes.length) return { ok: false, detail: "the archive is truncated" }
    const content = bytes.subarray(start, start + size)
    if (type === "x") paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(new TextDecoder().decode(content))?.[1]
    else if (type === "0" || type === "\0") files.push({ path: normaliseEntry(name), content })
    offset = start + Math.ceil(size / 512) * 512
  }
  return files.length === 0 ? { ok: false, detail: "the archive is empty or not a tar archive" } : { ok: true, files }
}
