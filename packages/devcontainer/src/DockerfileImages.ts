// The images a PR's Dockerfile makes the engine pull: each stage's `FROM`
// (its `--platform` and other flags skipped, ARGs declared before the first
// FROM expanded with the build's args as Docker does), `COPY`/`ADD
// --from=<image>`, `RUN --mount=…,from=<image>` and the `# syntax=` frontend.
// A stage named earlier and `scratch` pull nothing. PR content: an image
// position prbox cannot read is an error, never "no image".

/** The images a build pulls, or why the Dockerfile cannot be read for them. */
export type DockerfileImages =
  | { readonly ok: true; readonly images: ReadonlyArray<string> }
  | { readonly ok: false; readonly detail: string }

interface Line {
  readonly text: string
  readonly number: number
}

/** The parser directives at the top (`# syntax=…`, `# escapeChar=…`), as BuildKit reads them. */
const directives = (lines: ReadonlyArray<string>): Map<string, string> => {
  const found = new Map<string, string>()
  for (const line of lines) {
    const match = /^\s*#\s*([a-zA-Z][a-zA-Z0-9]*)\s*=\s*(.*?)\s*$/.exec(line)
    if (match === null) break
    found.set((match[1] ?? "").toLowerCase(), match[2] ?? "")
  }
  return found
}

/** Logical instructions: continuations joined, comment lines and heredoc bodies left out. */
const instructions = (lines: ReadonlyArray<string>, escapeChar: string): ReadonlyArray<Line> => {
  const out: Array<Line> = []
  let pending: Line | undefined
  let heredoc: { readonly end: string; readonly strip: boolean } | undefined
  lines.forEach((raw, index) => {
    if (heredoc !== undefined) {
      if ((heredoc.strip ? raw.replace(/^\t+/, "") : raw) === heredoc.end) heredoc = undefined
      return
    }
    if (/^\s*#/.test(raw) || (pending !== undefined && raw.trim() === "")) return
    const trimmed = raw.trimEnd()
    const continues = trimmed.endsWith(escapeChar)
    const part = continues ? trimmed.slice(0, -1) : trimmed
    pending =
      pending === undefined ? { text: part, number: index + 1 } : { ...pending, text: `${pending.text} ${part}` }
    if (continues) return
    out.push(pending)
    const here = /<<(-?)(["']?)([A-Za-z_][A-Za-z0-9_]*)\2/.exec(pending.text)
    if (here !== null && /^\s*(RUN|COPY|ADD)\s/i.test(pending.text))
      heredoc = { end: here[3] ?? "", strip: here[1] === "-" }
    pending = undefined
  })
  if (pending !== undefined) out.push(pending)
  return out
}

const unquote = (value: string): string => value.replace(/^"(.*)"$/, "$1").replace(/^'(.*)'$/, "$1")

/** `$name`, `${name}`, `${name:-word}`, `${name:+word}` as Docker expands them (unset: empty); undefined for any other form. */
const expand = (
  text: string,
  args: ReadonlyMap<string, string | undefined>,
  escapeChar: string
): string | undefined => {
  let out = ""
  for (let i = 0; i < text.length; i++) {
    const char = text[i] ?? ""
    if (char === escapeChar && text[i + 1] === "$") {
      out += "$"
      i++
      continue
    }
    if (char !== "$") {
      out += char
      continue
    }
    const braced = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:[-+])([^}]*))?\}/.exec(text.slice(i))
    const plain = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i))
    const match = braced ?? plain
    if (match === null) return undefined
    const value = args.get(match[1] ?? "")
    const set = value !== undefined && value !== ""
    if (braced !== null && braced[2] === ":-") out += set ? value : (braced[3] ?? "")
    else if (braced !== null && braced[2] === ":+") out += set ? (braced[3] ?? "") : ""
    else out += value ?? ""
    i += match[0].length - 1
  }
  return out
}

/** Reads the images `text` pulls, with `buildArgs` (devcontainer.json's `build.args`) over the ARGs' defaults. */
export const dockerfileImages = (text: string, buildArgs: Readonly<Record<string, string>>): DockerfileImages => {
  const lines = text.split(/\r?\n/)
  const found = directives(lines)
  const escapeChar = found.get("escape") ?? "\\"
  if (escapeChar !== "\\" && escapeChar !== "`")
    return { ok: false, detail: `the escape directive ${escapeChar} is not \\ or \`` }
  const images: Array<string> = []
  const stages = new Set<string>()
  const args = new Map<string, string | undefined>()
  let seenFrom = false
  const syntax = found.get("syntax")
  if (syntax !== undefined && syntax !== "") images.push(syntax)

  /** An image position: expanded, then a stage, scratch or an image; undefined when it cannot be read. */
  const image = (written: string): { readonly name: string } | undefined => {
    const name = expand(unquote(written), args, escapeChar)
    if (name === undefined || name.trim() === "" || name.includes("$")) return undefined
    const lower = name.toLowerCase()
    if (lower !== "scratch" && !stages.has(lower) && !/^\d+$/.test(name)) images.push(name)
    return { name }
  }

  for (const line of instructions(lines, escapeChar)) {
    const [keyword = "", ...words] = line.text.trim().split(/\s+/)
    const instruction = keyword.toUpperCase()
    const unreadable = (what: string) => ({
      ok: false as const,
      detail: `line ${line.number}: ${what} cannot be resolved to an image`
    })
    if (instruction === "ARG" && !seenFrom) {
      for (const word of words) {
        const eq = word.indexOf("=")
        const name = eq === -1 ? word : word.slice(0, eq)
        const written = eq === -1 ? undefined : expand(unquote(word.slice(eq + 1)), args, escapeChar)
        args.set(name, buildArgs[name] ?? written)
      }
    } else if (instruction === "FROM") {
      seenFrom = true
      const [written, as, stage] = words.filter((word) => !word.startsWith("--"))
      if (written === undefined || image(written) === undefined) return unreadable(`FROM ${written ?? ""}`.trim())
      if (as?.toUpperCase() === "AS" && stage !== undefined) stages.add(stage.toLowerCase())
    } else if (instruction === "COPY" || instruction === "ADD" || instruction === "RUN") {
      for (const word of words) {
        if (!word.startsWith("--")) break
        const from =
          /^--from=(.*)$/i.exec(word)?.[1] ??
          (/^--mount=/i.test(word) ? /(?:^|[=,])from=([^,]*)/i.exec(word.slice("--mount=".length))?.[1] : undefined)
        if (from !== undefined && image(from) === undefined) return unreadable(`${instruction} ${word}`)
      }
    }
  }
  return { ok: true, images }
}
