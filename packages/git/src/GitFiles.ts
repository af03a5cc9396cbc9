/**
 * git's own files, read and written in-process where a git process would
 * cost more than the open's work around it: packed-refs, FETCH_HEAD, a loose
 * object's header. Whatever is not exactly what git writes is refused
 * (undefined); the callers fail or ask git instead.
 */
import { constants, inflateSync } from "node:zlib"

export const commitPattern = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/

const HEADER = "# pack-refs with:"

interface PackedRef {
  readonly name: string
  /** The ref's line and its peeled (`^<oid>`) line, if any. */
  readonly lines: ReadonlyArray<string>
}

export interface MovedBranches {
  readonly packedRefs: string
  /** The branches found, by their short names. */
  readonly branches: ReadonlyArray<string>
}

/**
 * A `packed-refs` file with every `refs/heads/<branch>` renamed
 * `<prefix><branch>`, sorted by name as its `sorted` trait promises.
 */
export const movePackedBranches = (text: string, prefix: string): MovedBranches | undefined => {
  const lines = text.split("\n")
  if (lines.pop() !== "") return undefined
  const header = lines[0]?.startsWith(HEADER) === true ? lines.shift() : undefined
  const refs: Array<PackedRef> = []
  const branches: Array<string> = []
  for (const line of lines) {
    const last = refs.at(-1)
    if (line.startsWith("^") && last?.lines.length === 1 && commitPattern.test(line.slice(1))) {
      refs[refs.length - 1] = { ...last, lines: [...last.lines, line] }
      continue
    }
    const [oid = "", name = "", ...more] = line.split(" ")
    if (!commitPattern.test(oid) || !name.startsWith("refs/") || more.length > 0) return undefined
    const branch = name.startsWith("refs/heads/") ? name.slice("refs/heads/".length) : undefined
    if (branch !== undefined) branches.push(branch)
    const renamed = branch === undefined ? name : `${prefix}${branch}`
    refs.push({ name: renamed, lines: [`${oid} ${renamed}`] })
  }
  // git compares ref names as bytes.
  refs.sort((a, b) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name)))
  const body = refs.flatMap((ref) => ref.lines)
  return { packedRefs: [...(header === undefined ? [] : [header]), ...body, ""].join("\n"), branches }
}

export interface FetchHeadEntry {
  readonly oid: string
  /** False when git found no commit in the object (`not-for-merge`). */
  readonly forMerge: boolean
}

/** The one object a fetch of one refspec recorded in `FETCH_HEAD`: `<oid>\t[not-for-merge]\t<what>`. */
export const fetchHeadEntry = (text: string): FetchHeadEntry | undefined => {
  const match = /^([0-9a-f]+)\t(not-for-merge)?\t[^\n]*\n$/.exec(text)
  const oid = match?.[1]
  if (match === null || oid === undefined || !commitPattern.test(oid)) return undefined
  return { oid, forMerge: match[2] === undefined }
}

/** What the deflated loose object `bytes` (`objects/xx/…`) holds: commit, tree, blob or tag. */
export const looseObjectType = (bytes: Uint8Array): string | undefined => {
  try {
    // Sync flush: the header is all that is read, a truncated object is not an error here.
    const inflated = inflateSync(bytes, { finishFlush: constants.Z_SYNC_FLUSH })
    return /^(commit|tree|blob|tag) [0-9]+\0/.exec(inflated.subarray(0, 32).toString("latin1"))?.[1]
  } catch {
    return undefined
  }
}
