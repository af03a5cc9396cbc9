// Shows that the layout's rules (scripts/structure.mjs) can fail: in a copy of
// the tree, each rule below gets one planted violation, dependency-cruiser runs
// once, and every rule must report its plant. A rule that stays silent (a
// regular expression that no longer matches, a folder renamed) fails the run.
// `pnpm structure:rules`; scripts/test runs it after `pnpm structure`.
import { execFileSync, spawnSync } from "node:child_process"
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

interface Plant {
  readonly rule: string
  readonly file: string
  /** What the plant imports; `import * as` so that every parser counts it. */
  readonly from: string
  readonly typeOnly?: boolean
}

const engine = "packages/engine/src"
const plants: ReadonlyArray<Plant> = [
  { rule: "node-only-in-node-folders", file: `${engine}/sandbox/Stop.ts`, from: "node:fs" },
  { rule: "node-only-in-node-folders", file: "packages/domain/src/Ids.ts", from: "node:os" },
  { rule: "node-only-in-node-folders", file: "packages/devcontainer/src/Parse.ts", from: "node:path" },
  { rule: "node-only-in-node-folders", file: "packages/protocol/src/Api.ts", from: "node:util" },
  { rule: "node-only-in-node-folders", file: "packages/mcp/src/Tool.ts", from: "node:crypto" },
  { rule: "node-only-in-node-folders", file: "packages/registry/src/Manifest.ts", from: "node:crypto" },
  {
    rule: "adapters-import-only-domain",
    file: "packages/registry/src/Manifest.ts",
    from: "../../docker/src/Docker.ts"
  },
  { rule: "runtime-port-names-node-stream-types-only", file: `${engine}/ContainerRuntime.ts`, from: "node:stream" },
  {
    rule: "runtime-port-names-node-stream-only",
    file: `${engine}/ContainerRuntime.ts`,
    from: "node:fs",
    typeOnly: true
  },
  { rule: "engine-top-imports-no-room", file: `${engine}/Config.ts`, from: "./sandbox/Errors.ts" },
  {
    rule: "engine-rooms-import-no-node-folder",
    file: `${engine}/files/SandboxFiles.ts`,
    from: "./node/NodeSandboxFiles.ts"
  },
  { rule: "engine-exec-imports", file: `${engine}/exec/ExecTarget.ts`, from: "../workspace/Ownership.ts" },
  { rule: "engine-workspace-imports", file: `${engine}/workspace/Ownership.ts`, from: "../create/Workers.ts" },
  {
    rule: "engine-environment-imports",
    file: `${engine}/environment/EngineWorkspace.ts`,
    from: "../create/Workers.ts"
  },
  { rule: "engine-prebuild-imports", file: `${engine}/prebuild/PrebuildKey.ts`, from: "../create/Workers.ts" },
  { rule: "engine-reconcile-imports", file: `${engine}/reconcile/DriftPass.ts`, from: "../exec/ExecTarget.ts" },
  { rule: "engine-create-imports", file: `${engine}/create/Workers.ts`, from: "../sandbox/Stop.ts" },
  { rule: "engine-sandbox-imports", file: `${engine}/sandbox/Rebuild.ts`, from: "../gc/Gc.ts" },
  { rule: "engine-files-imports", file: `${engine}/files/WorkspaceDiff.ts`, from: "../jobs/SandboxJobs.ts" },
  { rule: "engine-jobs-imports", file: `${engine}/jobs/SandboxJobs.ts`, from: "../previews/Previews.ts" },
  { rule: "engine-previews-imports", file: `${engine}/previews/Previews.ts`, from: "../sandbox/SandboxService.ts" },
  { rule: "engine-gc-imports", file: `${engine}/gc/Gc.ts`, from: "../files/SandboxFiles.ts" },
  {
    rule: "engine-folder-without-rule-imports-no-folder",
    file: `${engine}/planted/New.ts`,
    from: "../exec/ExecTarget.ts"
  },
  { rule: "no-cycle", file: `${engine}/ContainerSpec.ts`, from: "./CodeServerSpec.ts" }
]

const root = join(import.meta.dirname, "..")
const copy = mkdtempSync(join(tmpdir(), "prbox-structure-"))
try {
  const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0")
  for (const file of tracked.filter((path) => path !== "" && existsSync(join(root, path)))) {
    cpSync(join(root, file), join(copy, file), { recursive: true })
  }
  symlinkSync(join(root, "node_modules"), join(copy, "node_modules"))
  plants.forEach((plant, index) => {
    const target = join(copy, plant.file)
    // A plant in a folder of its own stands for a folder added later; every other one names a file that exists.
    if (plant.file.includes("/planted/")) mkdirSync(dirname(target), { recursive: true })
    else if (!existsSync(target)) throw new Error(`the plant for ${plant.rule} names ${plant.file}, which is gone`)
    const name = `Planted${index}`
    const line = plant.typeOnly
      ? `import type * as ${name} from "${plant.from}"\nexport type ${name} = typeof ${name}\n`
      : `import * as ${name} from "${plant.from}"\nexport const planted${index} = ${name}\n`
    appendFileSync(target, `\n${line}`)
  })
  const cruise = spawnSync(
    join(root, "node_modules", ".bin", "depcruise"),
    ["--no-cache", "--config", "scripts/structure.mjs", "--output-type", "json", "packages", "apps", "scripts"],
    { cwd: copy, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 }
  )
  if (cruise.stdout === "") throw new Error(`dependency-cruiser gave no answer: ${cruise.stderr}`)
  const { summary } = JSON.parse(cruise.stdout) as {
    summary: { violations: ReadonlyArray<{ rule: { name: string }; from: string; to: string }> }
  }
  const silent = plants.filter(
    (plant) =>
      // A cycle is reported from whichever of its modules the walk met first.
      !summary.violations.some(
        (found) => found.rule.name === plant.rule && (found.from === plant.file || found.to === plant.file)
      )
  )
  for (const plant of plants) {
    console.log(`${silent.includes(plant) ? "SILENT" : "fires "}  ${plant.rule}  (${plant.file} → ${plant.from})`)
  }
  if (silent.length > 0) {
    console.error(
      `${silent.length} rule(s) did not report their planted violation: scripts/structure.mjs no longer checks them`
    )
    process.exitCode = 1
  } else {
    console.log(`every rule above reported its planted violation (${plants.length} plants in ${dirname(copy)})`)
  }
} finally {
  rmSync(copy, { recursive: true, force: true })
}
