import { Effect, FileSystem } from "effect"

/**
 * The Debian mirror this machine's apt already uses, so building the default
 * image reaches only what the host reaches. `$PRBOX_DEBIAN_MIRROR` overrides.
 */

interface AptSource {
  readonly types: ReadonlyArray<string>
  readonly uris: ReadonlyArray<string>
  readonly suites: ReadonlyArray<string>
  readonly components: ReadonlyArray<string>
}

/** `deb [options] uri suite component...` lines (sources.list). */
export const parseOneLine = (text: string): Array<AptSource> =>
  text
    .split("\n")
    .map((line) =>
      line
        .replace(/#.*/, "")
        .replace(/\[[^\]]*\]/, " ")
        .trim()
        .split(/\s+/)
    )
    .filter((words) => words.length >= 4)
    .map(([type, uri, suite, ...components]) => ({
      types: [type ?? ""],
      uris: [uri ?? ""],
      suites: [suite ?? ""],
      components
    }))

/** deb822 stanzas (`*.sources`); a stanza with `Enabled: no` counts for nothing. */
export const parseDeb822 = (text: string): Array<AptSource> =>
  text.split(/\n\s*\n/).map((stanza) => {
    const fields = new Map<string, Array<string>>()
    for (const line of stanza.split("\n")) {
      const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line.replace(/#.*/, ""))
      if (match?.[1] !== undefined) fields.set(match[1].toLowerCase(), (match[2] ?? "").trim().split(/\s+/))
    }
    if (fields.get("enabled")?.[0] === "no") return { types: [], uris: [], suites: [], components: [] }
    return {
      types: fields.get("types") ?? [],
      uris: fields.get("uris") ?? [],
      suites: fields.get("suites") ?? [],
      components: fields.get("components") ?? []
    }
  })

/** The first http(s) mirror of `suite` main among `sources`. */
export const mirrorOf = (sources: ReadonlyArray<AptSource>, suite: string): string | undefined => {
  for (const source of sources) {
    const uri = source.uris.find((u) => /^https?:\/\//.test(u))
    if (source.types.includes("deb") && source.suites.includes(suite) && source.components.includes("main")) {
      if (uri !== undefined) return uri
    }
  }
  return undefined
}

const SOURCES_DIR = "/etc/apt/sources.list.d"

/** The mirror for `suite` main, or a message saying where it was looked for. */
export const debianMirror = Effect.fn("DebianMirror.find")(function* (suite: string) {
  const override = process.env.PRBOX_DEBIAN_MIRROR
  if (override !== undefined && override.length > 0) return override
  const fs = yield* FileSystem.FileSystem
  const listed = yield* fs.readDirectory(SOURCES_DIR).pipe(Effect.orElseSucceed(() => []))
  const files = ["/etc/apt/sources.list", ...[...listed].sort().map((file) => `${SOURCES_DIR}/${file}`)]
  for (const file of files) {
    const parse = file.endsWith(".sources") ? parseDeb822 : file.endsWith(".list") ? parseOneLine : undefined
    if (parse === undefined) continue
    const text = yield* fs.readFileString(file).pipe(Effect.orElseSucceed(() => ""))
    const mirror = mirrorOf(parse(text), suite)
    if (mirror !== undefined) return mirror
  }
  return yield* Effect.fail(
    `no Debian mirror for ${suite} main in /etc/apt/sources.list(.d); set PRBOX_DEBIAN_MIRROR to one`
  )
})
