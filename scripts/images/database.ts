import { docker, type ImageRecipe } from "./images.ts"
import { debianRootfs, rootfsInputs } from "./rootfs.ts"

/**
 * A database server for the Compose tests (an app service and its
 * database): Debian bookworm's redis-server (scripts/images/rootfs.ts),
 * imported (`docker import`), listening on 6379 on every interface of its
 * container, as a Compose project's database does. Redis: the smallest
 * Debian database server, ready in milliseconds.
 */
const PACKAGES = ["redis-server"].join(",")
/** How the image runs: redis in the foreground, reachable from the project's other services. */
const CHANGES = [
  "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "EXPOSE 6379",
  'CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"]'
]

export const databaseImage: ImageRecipe = {
  name: "database",
  inputs: () => [...rootfsInputs(PACKAGES), ...CHANGES],
  build: async (tag) => {
    const rootfs = await debianRootfs("database", PACKAGES)
    docker(["import", ...CHANGES.flatMap((change) => ["--change", change]), rootfs, tag])
  }
}
