/**
 * The one setting prbox keeps in a repository's config, `remote.origin.url`,
 * read and written in the config file itself: a git process each time costs
 * more than the open's own work around it. Whatever this module does not
 * recognise exactly is left to `git config` (the callers fall back to it).
 */

const ORIGIN_SECTION = '[remote "origin"]'

/** The value as git's config files quote it; undefined for what a config file cannot hold (a line break, a NUL). */
export const quotedConfigValue = (value: string): string | undefined =>
  /[\n\r\0]/.test(value) ? undefined : `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`

const ESCAPES: Readonly<Record<string, string>> = {
  "\\": "\\",
  '"': '"',
  n: "\n",
  t: "\t",
  b: "\b"
}

/** A config line's value as git reads it (quotes, escapes, a trailing comment); undefined when malformed. */
const readValue = (raw: string): string | undefined => {
  let value = ""
  let pendingSpace = ""
  let quoted = false
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string
    if (c === "\\") {
      const escaped = ESCAPES[raw[i + 1] ?? ""]
      if (escaped === undefined) return undefined
      value += pendingSpace + escaped
      pendingSpace = ""
      i++
    } else if (c === '"') quoted = !quoted
    else if (!quoted && (c === "#" || c === ";")) break
    else if (!quoted && (c === " " || c === "\t")) pendingSpace += value === "" ? "" : c
    else {
      value += pendingSpace + c
      pendingSpace = ""
    }
  }
  return quoted ? undefined : value
}

interface OriginUrlLine {
  readonly index: number
  readonly value: string | undefined
}

/** Where the config's one `[remote "origin"]` section is (its header, the line past its end); undefined when there is not exactly one. */
const originSection = (lines: ReadonlyArray<string>): { readonly start: number; readonly end: number } | undefined => {
  const headers = lines.flatMap((line, index) => (line.trim().startsWith("[") ? [index] : []))
  const origins = headers.filter((index) => lines[index]?.trim() === ORIGIN_SECTION)
  const [start, ...more] = origins
  if (start === undefined || more.length > 0) return undefined
  return { start, end: headers.find((index) => index > start) ?? lines.length }
}

/** The `url` lines of the config's one `[remote "origin"]` section; undefined when there is not exactly one. */
const originUrlLines = (lines: ReadonlyArray<string>): ReadonlyArray<OriginUrlLine> | undefined => {
  const section = originSection(lines)
  if (section === undefined) return undefined
  const { start, end } = section
  return lines.slice(start + 1, end).flatMap((line, offset) => {
    const match = /^\s*url\s*=(.*)$/i.exec(line)
    return match === null ? [] : [{ index: start + 1 + offset, value: readValue(match[1] ?? "") }]
  })
}

/** Whether the config's `remote.origin.url` is `url` and nothing else. */
export const hasOriginUrl = (config: string, url: string): boolean => {
  const urls = originUrlLines(config.split("\n"))
  return urls !== undefined && urls.length === 1 && urls[0]?.value === url
}

/** The config with `remote.origin.url` set to `url`; undefined when its origin section is not the plain one git writes. */
export const withOriginUrl = (config: string, url: string): string | undefined => {
  const quoted = quotedConfigValue(url)
  const lines = config.split("\n")
  const urls = originUrlLines(lines)
  const [only, ...more] = urls ?? []
  if (quoted === undefined || only === undefined || more.length > 0) return undefined
  return lines.map((line, index) => (index === only.index ? `\turl = ${quoted}` : line)).join("\n")
}

/** A new repository's config with an origin at `url` (its fetches name their refspec). */
export const withOriginSection = (config: string, url: string): string | undefined => {
  const quoted = quotedConfigValue(url)
  if (quoted === undefined || originUrlLines(config.split("\n")) !== undefined) return undefined
  return `${config.endsWith("\n") || config === "" ? config : `${config}\n`}${ORIGIN_SECTION}\n\turl = ${quoted}\n`
}

/**
 * A cloned repository's config with its origin section cut down to `url`
 * alone (a clone also writes `tagOpt`, or a fetch refspec); undefined when it
 * has not exactly one origin section.
 */
export const withOnlyOriginUrl = (config: string, url: string): string | undefined => {
  const lines = config.split("\n")
  const section = originSection(lines)
  if (section === undefined) return undefined
  return withOriginSection([...lines.slice(0, section.start), ...lines.slice(section.end)].join("\n"), url)
}
