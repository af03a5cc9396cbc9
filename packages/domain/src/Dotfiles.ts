/**
 * The user's dotfiles, as the devcontainers CLI and Codespaces define them
 * (devcontainers/cli, src/spec-common/dotfiles.ts at commit
 * f683c29f64a20109b4453e5149807e390ff65133): a repository, the command that
 * installs it, and where in the home it goes. Pure: what the config means.
 */

/**
 * The names tried, in this order, when no `installCommand` is given: the
 * first that exists in the repository is run; none, and its top-level
 * dotfiles are linked into the home (the CLI's `installCommands`).
 */
export const DOTFILES_INSTALL_NAMES: ReadonlyArray<string> = [
  "install.sh",
  "install",
  "bootstrap.sh",
  "bootstrap",
  "script/bootstrap",
  "setup.sh",
  "setup",
  "script/setup"
]

/** The CLI's default `targetPath`. */
export const DEFAULT_DOTFILES_TARGET = "~/dotfiles"

/** Where the repository is: a URL git fetches, or a path on this machine. */
export type DotfilesSource =
  | { readonly _tag: "Url"; readonly url: string }
  | { readonly _tag: "Path"; readonly path: string }

const joinPath = (base: string, relative: string): string => {
  const parts: Array<string> = []
  for (const part of `${base}/${relative}`.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") parts.pop()
    else parts.push(part)
  }
  return `/${parts.join("/")}`
}

/**
 * What `repository` names, as the CLI reads it: a bare `owner/name` is that
 * GitHub repository; anything with a `:` is a URL (`https://`, `ssh://`,
 * `git@host:path`, `file://`); a path starting `/`, `./`, `../` or `~/` is a
 * folder on this machine, a relative one (and `~/`) from the user's home.
 */
export const dotfilesSource = (repository: string, userHome: string): DotfilesSource => {
  if (repository.startsWith("/")) return { _tag: "Path", path: joinPath("/", repository) }
  if (repository === "~" || repository.startsWith("~/")) {
    return { _tag: "Path", path: joinPath(userHome, repository.slice(1)) }
  }
  if (/^\.{1,2}\//.test(repository)) return { _tag: "Path", path: joinPath(userHome, repository) }
  if (repository.includes(":")) return { _tag: "Url", url: repository }
  return { _tag: "Url", url: `https://github.com/${repository}.git` }
}

/**
 * `targetPath` as a path relative to the sandbox user's home (`~/dotfiles`
 * is `dotfiles`), or why it is refused: it must name a folder inside the
 * home, `~/`-relative or plain relative, never the home itself, an absolute
 * path or one that climbs out with `..`.
 */
export const dotfilesTarget = (
  targetPath: string
): { readonly _tag: "Inside"; readonly relative: string } | { readonly _tag: "Refused"; readonly reason: string } => {
  const refused = (reason: string) => ({ _tag: "Refused", reason }) as const
  if (/[\0\n\r]/.test(targetPath)) return refused("targetPath holds a control character")
  const relative = targetPath === "~" ? "" : targetPath.startsWith("~/") ? targetPath.slice(2) : targetPath
  if (relative.startsWith("/") || relative.startsWith("~")) {
    return refused(`targetPath ${targetPath} must be inside the sandbox user's home, as ~/<folder>`)
  }
  const parts = relative.split("/").filter((part) => part !== "" && part !== ".")
  if (parts.includes("..")) return refused(`targetPath ${targetPath} must not leave the home with ..`)
  if (parts.length === 0) return refused(`targetPath ${targetPath} must be a folder inside the home, not the home`)
  return { _tag: "Inside", relative: parts.join("/") }
}
