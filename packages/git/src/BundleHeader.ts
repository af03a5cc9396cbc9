/** What a git bundle's header says: its prerequisites, its refs, and where its pack starts. */
export interface BundleHeader {
  readonly prerequisites: ReadonlyArray<string>
  readonly refs: ReadonlyArray<{ readonly commit: string; readonly name: string }>
  /** The pack's first byte. */
  readonly packStart: number
}

/** A header past this is not one `git bundle create` of a few commits makes. */
export const MAX_HEADER_BYTES = 64 * 1024

const OID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/

/**
 * Reads a bundle's header (v2, or v3 with only `@object-format`): the
 * reason it is refused, else what it names. Its content is the sandbox's,
 * so every line is checked and anything else is refused, never skipped.
 */
export const parseBundleHeader = (bytes: Uint8Array): BundleHeader | string => {
  const window = bytes.subarray(0, MAX_HEADER_BYTES)
  const end = window.indexOf(0x0a)
  if (end < 0) return "not a git bundle"
  const first = new TextDecoder().decode(window.subarray(0, end))
  if (first !== "# v2 git bundle" && first !== "# v3 git bundle") return "not a git bundle of version 2 or 3"
  const prerequisites: Array<string> = []
  const refs: Array<{ commit: string; name: string }> = []
  let at = end + 1
  for (;;) {
    const next = window.indexOf(0x0a, at)
    if (next < 0) return "the bundle's header has no end"
    const line = new TextDecoder("utf-8", { fatal: false }).decode(window.subarray(at, next))
    at = next + 1
    if (line === "") break
    if (line.startsWith("@")) {
      if (first !== "# v3 git bundle" || !/^@object-format=(sha1|sha256)$/.test(line)) {
        return "the bundle asks for a capability prbox does not take"
      }
      continue
    }
    if (line.startsWith("-")) {
      const oid = line.slice(1).split(" ")[0] ?? ""
      if (!OID.test(oid)) return "the bundle names a malformed prerequisite"
      prerequisites.push(oid)
      continue
    }
    const space = line.indexOf(" ")
    const commit = line.slice(0, space)
    const name = line.slice(space + 1)
    if (space < 0 || !OID.test(commit) || name === "" || /[\0-\x20\x7f]/.test(name)) {
      return "the bundle names a malformed ref"
    }
    refs.push({ commit, name })
  }
  return { prerequisites, refs, packStart: at }
}
