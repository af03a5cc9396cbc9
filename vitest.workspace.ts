import { existsSync, readdirSync } from "node:fs"
import { defineConfig } from "vitest/config"

// Every package and app with a test/ folder is one vitest project; the root
// options below (timeouts, the global container check) apply to all of them.
// A test drives real containers, so its default limit allows a loaded machine.
const roots = ["packages", "apps"]
  .filter((group) => existsSync(group))
  .flatMap((group) =>
    readdirSync(group, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `${group}/${entry.name}`)
  )

/**
 * Files that act on what every test shares, so they run alone, after the
 * rest: one removes and rebuilds the default image others start from, one
 * counts the engine probe's containers across the whole engine.
 */
const ALONE = ["packages/engine/test/DefaultImage.test.ts", "apps/cli/test/EngineDoctor.test.ts"]

export const projects = [
  ...[
    ...roots.filter((root) => readdirSync(root).includes("test")),
    // The installable package's test (it builds and installs the tarball).
    "scripts/package",
    // The benches' own parts (the load generator's connection pool).
    "scripts/bench"
  ].map((root) => ({
    extends: true as const,
    test: {
      name: root.split("/")[1] ?? root,
      root,
      include: ["test/**/*.test.ts"],
      exclude: ALONE.filter((file) => file.startsWith(`${root}/`)).map((file) => file.slice(root.length + 1))
    }
  })),
  {
    extends: true as const,
    test: { name: "alone", include: ALONE, maxWorkers: 1, sequence: { groupOrder: 1 } }
  }
]

export default defineConfig({
  test: {
    projects,
    // A test mostly waits on Docker, git and code-server: three files at a time keep two CPUs busy.
    maxWorkers: 3,
    globalSetup: ["scripts/testing/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000
  }
})
