import { execFile } from "node:child_process"
import { existsSync } from "node:fs"
import { delimiter, dirname, join, resolve } from "node:path"
import { promisify } from "node:util"
import { PRBOX_VERSION } from "@prbox/domain/Version"
import { ensureTarball } from "./build.ts"
import { PACKAGE_NAME } from "./Layout.ts"

export interface InstalledPackage {
  readonly prefix: string
  /** Absolute paths of the installed bins. */
  readonly prbox: string
  readonly prboxd: string
  readonly version: string
}

/**
 * Installs the package as a user would (`npm install -g`) into `prefix`:
 * the tarball of the tree as it is (built when missing or stale, see
 * build.ts), offline (it has no dependencies to fetch), with this process's
 * Node first on PATH, so npm and the install step run it.
 */
export const installPackage = async (prefix: string): Promise<InstalledPackage> => {
  const tarball = await ensureTarball()
  const absolute = resolve(prefix)
  await promisify(execFile)(
    "npm",
    ["install", "--global", "--prefix", absolute, "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball],
    { env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}` } }
  )
  const installed: InstalledPackage = {
    prefix: absolute,
    prbox: join(absolute, "bin", "prbox"),
    prboxd: join(absolute, "bin", "prboxd"),
    version: PRBOX_VERSION
  }
  for (const bin of [installed.prbox, installed.prboxd]) {
    if (!existsSync(bin)) throw new Error(`npm installed ${PACKAGE_NAME} into ${absolute} without ${bin}`)
  }
  return installed
}
