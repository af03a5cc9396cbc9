import { join } from "node:path"

/** `$PRBOX_CACHE` (default `$XDG_CACHE_HOME/prbox`): where the test images' heavy inputs are kept. */
export const cacheBase = (): string =>
  process.env.PRBOX_CACHE || join(process.env.XDG_CACHE_HOME || join(process.env.HOME ?? "/root", ".cache"), "prbox")

/** The tests' code-server distributions (the product's layout: `<dir>/<version>-node<version>-<arch>`). */
export const testDistributionDir = (): string => join(cacheBase(), "code-server-dist")
