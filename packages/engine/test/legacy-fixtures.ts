import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { Migrations } from "@prbox/store"
import Database from "better-sqlite3"
import { inject } from "vitest"
import { TEST_RUN_LABEL } from "../../../scripts/testing/global-setup.ts"
import { LABELS } from "../src/index.ts"
import { healthzTag } from "./harness.ts"

export interface LegacyRow {
  readonly id: string
  readonly repository: string
  readonly pullRequest: number
  readonly password: string | null
  readonly status: string
  readonly containerId: string | null
  readonly provider?: string
  readonly account?: string
}

/** A running container labelled as sandbox `sandboxId` of `home`, started with the docker CLI. */
export const runLabelled = (home: string, sandboxId: string): string =>
  execFileSync(
    "docker",
    [
      "run",
      "-d",
      "--label",
      `${TEST_RUN_LABEL}=${inject("testRunId")}`,
      "--label",
      `${LABELS.sandbox}=${sandboxId}`,
      "--label",
      `${LABELS.home}=${home}`,
      "--label",
      `${LABELS.pr}=1`,
      healthzTag
    ],
    { encoding: "utf8" }
  ).trim()

export const isRunningNow = (containerId: string): boolean =>
  execFileSync("docker", ["inspect", "-f", "{{.State.Running}}", containerId], { encoding: "utf8" }).trim() === "true"

/** Writes `<home>/prbox.db` as schema v1 wrote it, with these rows. */
export const writeV1Database = (home: string, rows: ReadonlyArray<LegacyRow>): void => {
  const db = new Database(join(home, "prbox.db"))
  try {
    db.exec(Migrations.VERSION_TABLE)
    db.exec(Migrations.V1_SCHEMA)
    db.prepare("INSERT INTO schema_version (version) VALUES (1)").run()
    const insert = db.prepare(
      `INSERT INTO sandboxes (id, provider, account, repository, pull_request, access_password, workspace_path,
         container_id, status, created_at, last_activity_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1)`
    )
    for (const row of rows) {
      insert.run(
        row.id,
        row.provider ?? "git",
        row.account ?? "",
        row.repository,
        row.pullRequest,
        row.password,
        join(home, "workspaces", row.id),
        row.containerId,
        row.status
      )
    }
  } finally {
    db.close()
  }
}
