// The Compose scenario of `pnpm bench devcontainer --compose`: an app
// service built from a Dockerfile (prbox's default image plus a step, new
// per tool and run, so a cold open builds) and a database service (the local
// redis image, scripts/images/database.ts), the app's postCreateCommand
// reaching redis by its service name. Both tools run the same files through
// Debian's docker-compose.
import { execFileSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { databaseImage } from "../images/database.ts"
import { ensureImage } from "../images/images.ts"

/** The local redis image's tag (built once, cached by content). */
export const benchDatabase = (): Promise<string> => ensureImage(databaseImage)

// Talks RESP over bash's /dev/tcp (the image has no redis client); waits for redis first: depends_on does not.
const POST_CREATE = [
  "for i in $(seq 1 100); do (exec 3<>/dev/tcp/db/6379) 2>/dev/null && break; sleep 0.1; done",
  "exec 3<>/dev/tcp/db/6379",
  "printf 'PING\\r\\n' >&3",
  "read -r answer <&3",
  'test "$answer" = "+PONG$(printf "\\r")"'
].join("; ")

/** The repository's files for one PR. */
export const writeComposeRepository = (work: string, base: string, database: string, nonce: string) => {
  mkdirSync(join(work, ".devcontainer"), { recursive: true })
  writeFileSync(
    join(work, ".devcontainer", "Dockerfile"),
    `FROM ${base}\nRUN echo "hi ${nonce}" > /etc/greeting && mkdir -p /opt/tool && seq 1 20000 > /opt/tool/data\n`
  )
  writeFileSync(
    join(work, ".devcontainer", "docker-compose.yml"),
    [
      "services:",
      "  app:",
      "    build: {context: ., dockerfile: Dockerfile}",
      "    command: sleep infinity",
      "    environment: {APP_ENV: bench}",
      "    depends_on: [db]",
      // The repository at the workspace folder, as Compose devcontainers bind it (prbox puts its checkout there).
      "    volumes: ['..:/workspaces/bench']",
      "  db:",
      `    image: ${database}`,
      ""
    ].join("\n")
  )
  writeFileSync(
    join(work, ".devcontainer", "devcontainer.json"),
    `${JSON.stringify(
      {
        name: "bench",
        dockerComposeFile: "docker-compose.yml",
        service: "app",
        workspaceFolder: "/workspaces/bench",
        postCreateCommand: ["bash", "-c", POST_CREATE]
      },
      null,
      2
    )}\n`
  )
  writeFileSync(join(work, "README.md"), `bench ${nonce}\n`)
}

/** `devcontainer up`'s Compose project of a folder: every container and network of it removed. */
export const removeComposePeer = (appContainers: ReadonlyArray<string>) => {
  const projects = new Set(
    appContainers.map((id) =>
      execFileSync("docker", ["inspect", "-f", '{{index .Config.Labels "com.docker.compose.project"}}', id], {
        encoding: "utf8"
      }).trim()
    )
  )
  for (const project of projects) {
    if (project === "" || project === "<no value>") continue
    const ids = execFileSync("docker", ["ps", "-aq", "--filter", `label=com.docker.compose.project=${project}`], {
      encoding: "utf8"
    })
      .split("\n")
      .filter((id) => id.length > 0)
    if (ids.length > 0) execFileSync("docker", ["rm", "-f", "-v", ...ids], { stdio: "ignore" })
    execFileSync("docker", ["network", "rm", `${project}_default`], { stdio: "ignore" })
  }
}
