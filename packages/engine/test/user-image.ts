import { execFileSync } from "node:child_process"
import { Effect } from "effect"
import { ensureImage, type ImageRecipe } from "../../../scripts/images/images.ts"
import { daemonSandboxUser } from "../src/ContainerSpec.ts"
import { DefaultImage } from "../src/node/index.ts"

/**
 * An image as devcontainer images are made: a non-root user `dev` (uid
 * 1234, its own home, bash, sudo without a password; the image's USER), a
 * second user `ops`, a login profile that
 * sets a variable, a tool on a PATH the image's ENV sets (and Debian's
 * /etc/profile resets), and a CMD that leaves a mark and keeps a process.
 * Flattened from prbox's default image (built here from Debian packages) so
 * no ENV HOME is inherited: HOME is what the user's passwd entry says.
 * Built once per content (scripts/images), like the other test images.
 */
export const DEV_UID = 1234
/** A second user, `ops`, that only a configuration names. */
export const OPS_UID = 2345

const dockerfile = `FROM ${DefaultImage.DEFAULT_IMAGE} AS root
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends sudo \\
 && rm -rf /var/lib/apt/lists/* \\
 && useradd --create-home --uid ${DEV_UID} --shell /bin/bash dev \\
 && useradd --create-home --uid ${OPS_UID} --shell /bin/sh ops \\
 && echo 'dev ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/dev && chmod 0440 /etc/sudoers.d/dev \\
 && echo 'export FROM_PROFILE=profile-of-dev' >> /home/dev/.profile \\
 && mkdir -p /opt/tool/bin && printf '#!/bin/sh\\necho tool-ran\\n' > /opt/tool/bin/mytool && chmod 0755 /opt/tool/bin/mytool
FROM scratch
COPY --from=root / /
ENV PATH=/opt/tool/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
USER dev
WORKDIR /home/dev
CMD ["sh", "-c", "echo \\"$$\\" > /tmp/image-cmd; exec sleep infinity"]
`

export const devUserImage: ImageRecipe = {
  name: "dev-user",
  inputs: () => [dockerfile],
  build: (tag) => {
    execFileSync("docker", ["build", "-q", "-t", tag, "-"], { input: dockerfile, stdio: ["pipe", "ignore", "inherit"] })
  }
}

/** The dev-user image's tag, built when missing. */
export const devUserTag = Effect.tryPromise(() => ensureImage(devUserImage))

/** Who this test run's sandboxes run as: the workspace owner. */
export const sandboxUid = daemonSandboxUser().uid

/** Runs `script` in a sandbox's container, as `user` (root when absent), and returns its output trimmed. */
export const inContainer = (containerId: string, script: string, user?: string): string =>
  execFileSync("docker", ["exec", ...(user === undefined ? [] : ["-u", user]), containerId, "sh", "-c", script], {
    encoding: "utf8"
  }).trim()
