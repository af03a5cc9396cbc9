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

export const projects = [
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
    include: ["test/**/*.test.ts"]
  }
}))

export default defineConfig({
  test: {
    projects,
    globalSetup: ["scripts/testing/global-setup.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 60_000
  }
})
