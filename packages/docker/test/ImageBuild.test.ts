import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { assert, layer } from "@effect/vitest"
import type { ImageBuildRequest } from "@prbox/domain"
import { Effect } from "effect"
import { Docker, NodeDocker } from "../src/index.ts"
import { debianBase, debianMissing, debianRootfs, healthzSpec, scopedContainer } from "./fixtures.ts"

const tagsOf = (repository: string): Array<string> =>
  execFileSync("docker", ["images", "--format", "{{.Repository}}:{{.Tag}}", repository], { encoding: "utf8" })
    .split("\n")
    .filter((line) => line.length > 0)

/** A repository under prbox-test/ whose images are removed when the test's scope closes. */
const scopedRepository = Effect.acquireRelease(
  Effect.sync(() => `prbox-test/build-${randomBytes(4).toString("hex")}`),
  (repository) =>
    Effect.sync(() => {
      const tags = tagsOf(repository)
      if (tags.length > 0) execFileSync("docker", ["rmi", "-f", ...tags], { stdio: "ignore" })
    })
)

/** A directory with the given files (and symbolic links, `-> target`), removed when the test's scope closes. */
const scopedDir = (files: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(join(tmpdir(), "prbox-build-"))
      for (const [path, content] of Object.entries(files)) write(dir, path, content)
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const write = (dir: string, path: string, content: string): void => {
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  if (content.startsWith("-> ")) symlinkSync(content.slice(3), join(dir, path))
  else writeFileSync(join(dir, path), content)
}

const build = (request: Omit<ImageBuildRequest, "args" | "labels"> & Partial<ImageBuildRequest>) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const lines: Array<string> = []
    const result = yield* docker.buildImage({ args: {}, labels: {}, ...request }, (line) => lines.push(line))
    return { ...result, lines }
  })

/** Runs `script` in a container of `image` (labelled, removed after) and returns its output. */
const runIn = (image: string, script: string) =>
  Effect.gen(function* () {
    const docker = yield* Docker
    const { id } = yield* scopedContainer(healthzSpec({ image, cmd: ["sleep", "600"], init: true }))
    yield* docker.start(id)
    return yield* docker.exec(id, { argv: ["sh", "-c", script], timeoutMs: 20_000, maxOutputBytes: 10_000 })
  })

const rootfs = debianRootfs()
if (rootfs === undefined) console.warn(`ImageBuild tests skipped: ${debianMissing}`)

// Real time: builds and execs must not run on the TestClock.
layer(NodeDocker.layer(), { excludeTestServices: true, timeout: 600_000 })("NodeDocker image builds", (it) => {
  it.effect.skipIf(rootfs === undefined)(
    "builds with args and labels, reporting each step, and tags by the inputs' hash",
    () =>
      Effect.gen(function* () {
        const docker = yield* Docker
        const base = yield* debianBase
        const repository = yield* scopedRepository
        const contextDir = yield* scopedDir({
          "docker/Dockerfile": `FROM ${base}\nARG GREETING\nLABEL greeting=$GREETING\nCOPY hello.txt /hello.txt\nRUN echo "$GREETING" > /greeting.txt\n`,
          "hello.txt": "hello from the context\n"
        })
        const built = yield* build({
          contextDir,
          dockerfile: "docker/Dockerfile",
          args: { GREETING: "bonjour" },
          labels: { "dev.prbox.test": "build" },
          repository
        })
        assert.isFalse(built.reused)
        assert.match(built.tag, new RegExp(`^${repository}:[0-9a-f]{24}$`))
        assert.deepStrictEqual(tagsOf(repository), [built.tag])
        // The builder applies the labels as a last step of its own.
        assert.include(built.lines, `Step 1/6 : FROM ${base}`)
        assert.include(built.lines, 'Step 5/6 : RUN echo "$GREETING" > /greeting.txt')

        const info = yield* docker.imageInfo(built.tag)
        assert.strictEqual(info?.labels.greeting, "bonjour")
        assert.strictEqual(info?.labels["dev.prbox.test"], "build")
        const output = yield* runIn(built.tag, "cat /greeting.txt /hello.txt")
        assert.strictEqual(output.stdout, "bonjour\nhello from the context\n")
      })
  )

  it.effect.skipIf(rootfs === undefined)("reuses an unchanged build; any changed input is a new tag", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const base = yield* debianBase
      const repository = yield* scopedRepository
      const contextDir = yield* scopedDir({
        Dockerfile: `FROM ${base}\nARG FLAVOUR=plain\nCOPY . /ctx/\nRUN echo "$FLAVOUR" > /flavour\n`,
        "src/app.txt": "v1\n",
        ".dockerignore": "*.log\n!keep.log\n",
        "debug.log": "noise\n",
        "keep.log": "kept\n"
      })
      const request = { contextDir, dockerfile: "Dockerfile", args: { FLAVOUR: "sweet" }, repository }
      const first = yield* build(request)
      const firstId = (yield* docker.imageInfo(first.tag))?.id
      const again = yield* build(request)
      assert.deepStrictEqual(
        { tag: again.tag, reused: again.reused, lines: again.lines },
        {
          tag: first.tag,
          reused: true,
          lines: []
        }
      )
      assert.strictEqual((yield* docker.imageInfo(again.tag))?.id, firstId)

      // An ignored file is not an input; a sent one is.
      write(contextDir, "debug.log", "more noise\n")
      assert.isTrue((yield* build(request)).reused)
      const listing = yield* runIn(first.tag, "cd /ctx && find . -type f | sort")
      assert.strictEqual(listing.stdout, "./.dockerignore\n./Dockerfile\n./keep.log\n./src/app.txt\n")

      const otherArgs = yield* build({ ...request, args: { FLAVOUR: "salty" } })
      assert.isFalse(otherArgs.reused)
      assert.notStrictEqual(otherArgs.tag, first.tag)

      write(contextDir, "src/app.txt", "v2\n")
      const changed = yield* build(request)
      assert.isFalse(changed.reused)
      assert.notStrictEqual(changed.tag, first.tag)
      assert.notStrictEqual(changed.tag, otherArgs.tag)
      assert.strictEqual(tagsOf(repository).length, 3)
    })
  )

  it.effect.skipIf(rootfs === undefined)("builds the target stage of a multi-stage Dockerfile", () =>
    Effect.gen(function* () {
      const docker = yield* Docker
      const base = yield* debianBase
      const repository = yield* scopedRepository
      const contextDir = yield* scopedDir({
        Dockerfile: `FROM ${base} AS first\nRUN echo first > /first.txt\n\nFROM ${base} AS second\nRUN echo second > /second.txt\n`
      })
      const built = yield* build({ contextDir, dockerfile: "Dockerfile", target: "first", repository })
      const { id } = yield* scopedContainer(healthzSpec({ image: built.tag, cmd: ["true"] }))
      assert.isTrue(yield* docker.hasPath(id, "/first.txt"))
      assert.isFalse(yield* docker.hasPath(id, "/second.txt"))
      const other = yield* build({ contextDir, dockerfile: "Dockerfile", target: "second", repository })
      assert.notStrictEqual(other.tag, built.tag)
    })
  )

  it.effect.skipIf(rootfs === undefined)("fails a failing step with ImageBuildFailed naming it, leaving no tag", () =>
    Effect.gen(function* () {
      const base = yield* debianBase
      const repository = yield* scopedRepository
      const contextDir = yield* scopedDir({ Dockerfile: `FROM ${base}\nRUN true\nRUN echo doomed && exit 3\n` })
      const lines: Array<string> = []
      const docker = yield* Docker
      const failure = yield* Effect.flip(
        docker.buildImage({ contextDir, dockerfile: "Dockerfile", args: {}, labels: {}, repository }, (line) =>
          lines.push(line)
        )
      )
      assert.strictEqual(failure._tag, "ImageBuildFailed")
      assert.strictEqual(failure._tag === "ImageBuildFailed" && failure.step, "Step 3/3 : RUN echo doomed && exit 3")
      assert.include(failure.message, "returned a non-zero code: 3")
      assert.include(lines, "doomed")
      assert.deepStrictEqual(tagsOf(repository), [])
    })
  )

  it.effect("refuses a Dockerfile outside the context, or missing from it, before building", () =>
    Effect.gen(function* () {
      const repository = yield* scopedRepository
      const outer = yield* scopedDir({ Dockerfile: "FROM scratch\n", "context/linked": "-> ../Dockerfile" })
      const contextDir = join(outer, "context")
      for (const dockerfile of ["../Dockerfile", join(outer, "Dockerfile"), "linked", "absent"]) {
        const failure = yield* Effect.flip(build({ contextDir, dockerfile, repository }))
        assert.strictEqual(failure._tag, "ImageBuildFailed")
        assert.include(failure.message, `the Dockerfile ${dockerfile} is`)
      }
      const noContext = yield* Effect.flip(
        build({ contextDir: join(outer, "nowhere"), dockerfile: "Dockerfile", repository })
      )
      assert.strictEqual(noContext._tag, "ImageBuildFailed")
      assert.include(noContext.message, "ENOENT")
      assert.deepStrictEqual(tagsOf(repository), [])
    })
  )

  it.effect.skipIf(rootfs === undefined)("sends a symbolic link as a link, never its target's content", () =>
    Effect.gen(function* () {
      const base = yield* debianBase
      const repository = yield* scopedRepository
      const secret = `host-secret-${randomBytes(6).toString("hex")}`
      const outside = yield* scopedDir({ "secret.txt": `${secret}\n` })
      const contextDir = yield* scopedDir({
        Dockerfile: `FROM ${base}\nCOPY . /ctx/\n`,
        "absolute.txt": `-> ${join(outside, "secret.txt")}`,
        "dir/relative.txt": `-> ${join("..", "..", outside.split("/").at(-1) ?? "", "secret.txt")}`
      })
      const built = yield* build({ contextDir, dockerfile: "Dockerfile", repository })
      const output = yield* runIn(
        built.tag,
        `readlink /ctx/absolute.txt; test -L /ctx/dir/relative.txt && echo link; grep -r -l ${secret} /ctx; echo done`
      )
      assert.strictEqual(output.stdout, `${join(outside, "secret.txt")}\nlink\ndone\n`)
    })
  )

  it.effect(
    "refuses a .dockerignore that is a link (to a file, to /dev/zero, to a pipe): it reads nothing through it",
    () =>
      Effect.gen(function* () {
        const repository = yield* scopedRepository
        const outside = yield* scopedDir({ "rules.txt": "Dockerfile\n" })
        execFileSync("mkfifo", [join(outside, "pipe")])
        for (const target of [join(outside, "rules.txt"), "/dev/zero", join(outside, "pipe")]) {
          const contextDir = yield* scopedDir({ Dockerfile: "FROM scratch\n", ".dockerignore": `-> ${target}` })
          const refused = yield* Effect.flip(build({ contextDir, dockerfile: "Dockerfile", repository }))
          assert.include(refused.message, "ELOOP", target)
        }
        assert.deepStrictEqual(tagsOf(repository), [])
      })
  )
})
