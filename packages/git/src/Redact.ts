// Text that leaves this package (errors, progress lines) may quote URLs and
// git's stderr; a credential in either must never reach a log or the database.

const rules: ReadonlyArray<readonly [RegExp, string]> = [
  // userinfo of any URL: `https://user:token@host`, `https://token@host`
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s@]+@/gi, "$1***@"],
  // scp-like `user:token@host:path`
  [/(^|\s)[^\s/:@]+:[^\s/@]+@(?=[^\s/:]+:)/g, "$1***@"],
  // query or form parameters that carry secrets
  [/\b((?:access_|private_|auth_|oauth_)?token|password|passwd|secret|key)=[^&\s'"]+/gi, "$1=***"],
  // HTTP authorization headers (GIT_CURL_VERBOSE, GIT_TRACE_CURL)
  [/\b(authorization:\s*\w+)\s+\S+/gi, "$1 ***"]
]

export const redactCredentials = (text: string): string =>
  rules.reduce((acc, [pattern, replacement]) => acc.replace(pattern, replacement), text)

/** The last lines of git's stderr, redacted and bounded, for an error's `detail`. */
export const stderrTail = (stderr: string, maxLines = 8, maxChars = 800): string => {
  const lines = stderr
    .split("\n")
    // Progress meters rewrite one line with `\r`; only its final state matters.
    .map((line) => (line.split("\r").at(-1) ?? "").trim())
    .filter((line) => line.length > 0)
  const tail = redactCredentials(lines.slice(-maxLines).join("\n"))
  return tail.length > maxChars ? `…${tail.slice(-maxChars)}` : tail
}

/** A URL that names a user or password: `https://user:token@...`, or any userinfo over http(s). */
export const hasUrlCredentials = (url: string): boolean =>
  /^[a-z][a-z0-9+.-]*:\/\/[^/@]*:[^/@]*@/i.test(url) || /^https?:\/\/[^/]*@/i.test(url)
