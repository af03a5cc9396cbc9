import { execFileSync } from "node:child_process"
import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { imageExists } from "../../../scripts/images/images.ts"
import { debianMissing, debianRootfs } from "../../docker/test/fixtures.ts"
import { healthzTag } from "./harness.ts"

/**
 * The healthz stub on Debian (dash, coreutils, findutils, git): what the
 * workspace's scripts meet in a glibc image, and git for a diff in the
 * container. Built from the cached Debian root filesystem and the healthz
 * image, tagged by the hash of both and of this recipe, reused by that tag.
 */
export const healthzGitImage = (): string => {
  const rootfs = debianRootfs()
  if (rootfs === undefined) throw new Error(debianMissing)
  const base = `prbox-test/debian:${rootfs.key}`
  if (!imageExists(base)) {
    execFileSync("docker", [
      "import",
      "--change",
      "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      rootfs.path,
      base
    ])
  }
  const dockerfile = [
    `FROM ${base}`,
    `COPY --from=${healthzTag} /bin/busybox /opt/busybox/busybox`,
    `COPY --from=${healthzTag} /srv/prbox /srv/prbox`,
    // busybox's applets stay off the image's PATH: the stub alone uses them (its handler runs under busybox sh).
    "RUN /opt/busybox/busybox --install -s /opt/busybox && sed -i 's#-e /bin/sh #-e /opt/busybox/sh #' /srv/prbox/entrypoint.sh && mkdir -p /workspace && chmod 1777 /workspace",
    "LABEL dev.prbox.code-server=included",
    'ENTRYPOINT ["/usr/bin/env", "PATH=/opt/busybox", "/opt/busybox/sh", "/srv/prbox/entrypoint.sh"]',
    ""
  ].join("\n")
  return builtImage("prbox-test/healthz-git", dockerfile)
}

/** `dockerfile` (no context) built as `<name>:<hash of it>`, reused by that tag. */
export const builtImage = (name: string, dockerfile: string): string => {
  const tag = `${name}:${createHash("sha256").update(dockerfile).digest("hex").slice(0, 16)}`
  if (imageExists(tag)) return tag
  const context = mkdtempSync(join(tmpdir(), "prbox-test-image-"))
  try {
    writeFileSync(join(context, "Dockerfile"), dockerfile)
    execFileSync("docker", ["build", "--quiet", "--tag", tag, context], { stdio: "ignore" })
  } finally {
    rmSync(context, { recursive: true, force: true })
  }
  return tag
}
