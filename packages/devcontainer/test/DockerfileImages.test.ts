import { assert, describe, it } from "@effect/vitest"
import { dockerfileImages } from "../src/index.ts"

// name, Dockerfile, build args → the images the build pulls
const read: ReadonlyArray<readonly [string, string, Readonly<Record<string, string>>, ReadonlyArray<string>]> = [
  ["one stage", "FROM debian:12\nRUN true\n", {}, ["debian:12"]],
  ["lowercase instruction", "from localhost:5000/base:1\n", {}, ["localhost:5000/base:1"]],
  [
    "every stage; a stage named earlier and scratch pull nothing",
    "FROM node:20 AS build\nRUN make\nFROM Build AS again\nFROM scratch\nFROM 127.0.0.1:5000/runtime:2\nCOPY --from=build /a /b\n",
    {},
    ["node:20", "127.0.0.1:5000/runtime:2"]
  ],
  [
    "--platform and other flags are not the image",
    "FROM --platform=$BUILDPLATFORM localhost:5000/base AS x\n",
    {},
    ["localhost:5000/base"]
  ],
  [
    "a global ARG's default, ${} and $ forms",
    "ARG REG=localhost:5000\nARG TAG=1\nFROM ${REG}/base:$TAG\n",
    {},
    ["localhost:5000/base:1"]
  ],
  [
    "build args over the ARG's default",
    "ARG BASE=debian:12\nFROM $BASE\n",
    { BASE: "localhost:5000/evil:1" },
    ["localhost:5000/evil:1"]
  ],
  [
    "an ARG's default built from an earlier one; :- and :+",
    'ARG HOST="localhost:5000"\nARG IMAGE=${HOST}/a\nFROM ${IMAGE}:${TAG:-7}\nFROM x${HOST:+/y}\n',
    {},
    ["localhost:5000/a:7", "x/y"]
  ],
  ["a build arg for an ARG not declared is not used", "FROM debian${SUFFIX}\n", { SUFFIX: ":evil" }, ["debian"]],
  [
    "continuations and comment lines inside them",
    "FROM \\\n# a comment\n  localhost:5000/base:1 \\\n  AS x\n",
    {},
    ["localhost:5000/base:1"]
  ],
  ["the escape directive", "# escape=`\nFROM `\n  localhost:5000/base\nRUN echo `$HOME\n", {}, ["localhost:5000/base"]],
  [
    "the syntax directive's frontend",
    "# syntax=localhost:5000/frontend:1\nFROM debian\n",
    {},
    ["localhost:5000/frontend:1", "debian"]
  ],
  [
    "COPY --from an image, RUN --mount from an image",
    "FROM debian\nCOPY --chown=1 --from=localhost:5000/tools:1 /t /t\nRUN --mount=type=bind,from=127.0.0.1:5000/src,target=/s true\nCOPY --from=0 /x /y\n",
    {},
    ["debian", "localhost:5000/tools:1", "127.0.0.1:5000/src"]
  ],
  [
    "a heredoc's body is not read as instructions",
    "FROM debian\nRUN <<EOF\nFROM localhost:5000/not-an-image\nEOF\nFROM alpine\n",
    {},
    ["debian", "alpine"]
  ]
]

const refused: ReadonlyArray<readonly [string, string, string]> = [
  ["a FROM without an image", "FROM\n", "line 1: FROM cannot be resolved"],
  [
    "an expansion Docker has and prbox does not read",
    "ARG B=x\nFROM ${B%%y}\n",
    "line 2: FROM ${B%%y} cannot be resolved"
  ],
  ["an image that expands to nothing", "FROM $NOTHING\n", "cannot be resolved"],
  ["a COPY --from that expands to nothing", "FROM debian\nCOPY --from=$X /a /b\n", "line 2: COPY --from=$X"],
  ["an escape that is neither \\ nor `", "# escape=x\nFROM debian\n", "escape directive"]
]

describe("dockerfileImages", () => {
  for (const [name, text, args, images] of read) {
    it(name, () => assert.deepStrictEqual(dockerfileImages(text, args), { ok: true, images }))
  }
  for (const [name, text, detail] of refused) {
    it(`refused: ${name}`, () => {
      const result = dockerfileImages(text, {})
      assert.isFalse(result.ok)
      if (!result.ok) assert.include(result.detail, detail)
    })
  }
})
