/**
 * prbox's version: the one source for `prbox --version`, prboxd's version
 * answer, the package `pnpm run package` writes and the VS Code extension
 * it ships. No imports, so a fast path can read it without loading effect.
 */
export const PRBOX_VERSION = "0.1.0"
