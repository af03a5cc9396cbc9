import { execFileSync, spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"

/**
 * Test images are built locally (no registry is reachable from CI) and tagged
 * by the hash of everything that goes into them, so an unchanged image is
 * never rebuilt and a changed one never reused.
 */
export interface ImageRecipe {
  readonly name: string
  /** Files and strings whose content determines the image. */
  readonly inputs: () => ReadonlyArray<string>
  readonly build: (tag: string) => void | Promise<void>
}

const hashInputs = (inputs: ReadonlyArray<string>): string => {
  const hash = createHash("sha256")
  for (const input of inputs) {
    hash.update(input)
    hash.update("\0")
  }
  return hash.digest("hex").slice(0, 16)
}

/** Lists every file below `dir` with its content, for hashing. */
export const directoryInputs = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => statSync(join(dir, file)).isFile())
    .sort()
    .flatMap((file) => [file, readFileSync(join(dir, file)).toString("base64")])

export const imageTag = (recipe: ImageRecipe): string => `prbox-test/${recipe.name}:${hashInputs(recipe.inputs())}`

export const imageExists = (tag: string): boolean =>
  spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0

/** Builds the image unless an image with the same content tag exists; returns the tag. */
export const ensureImage = async (recipe: ImageRecipe): Promise<string> => {
  const tag = imageTag(recipe)
  if (imageExists(tag)) return tag
  process.stderr.write(`[prbox images] building ${tag}\n`)
  await recipe.build(tag)
  if (!imageExists(tag)) throw new Error(`building ${tag} finished but the image is missing`)
  return tag
}

export const docker = (args: ReadonlyArray<string>): void => {
  execFileSync("docker", args, { stdio: ["ignore", "inherit", "inherit"] })
}
