// git's own check-ref-format rules, checked before a name reaches a git
// command line: a ref that passes cannot be read as an option, a revision
// range (`..`), a reflog expression (`@{`) or a refspec (`:`).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const forbidden = /[\u0000-\u0020\u007f~^:?*[\\]|\.\.|@\{|\/\/|\/\.|\.lock(?:\/|$)|[./]$/

/** A full ref name (`refs/...`) that git accepts and that is safe on a command line. */
export const isSafeRefName = (ref: string): boolean =>
  ref.startsWith("refs/") && ref.length > "refs/".length && !forbidden.test(ref)

/** A branch name that `git checkout -b` accepts and that cannot be read as an option. */
export const isSafeBranchName = (branch: string): boolean =>
  branch.length > 0 && !branch.startsWith("-") && isSafeRefName(`refs/heads/${branch}`)
