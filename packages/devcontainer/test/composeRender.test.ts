import { assert, describe, it } from "@effect/vitest"
import { renderCompose } from "./composeRender.ts"

// The corpus test's stand-in for `docker compose config`: what it must do as Compose does.

const root = "/r"
const render = (text: string, exists: (path: string) => boolean = () => false, path = ".devcontainer/c.yml") =>
  renderCompose([{ path, text }], root, exists)

describe("the corpus test's Compose rendering", () => {
  const rows: ReadonlyArray<readonly [string, string, unknown]> = [
    [
      "variables from an empty environment",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own interpolation
      "services:\n  a:\n    image: x:${TAG:-1}${UNSET}\n    command: echo $$HOME $HOME\n",
      { services: { a: { image: "x:1", command: "echo $HOME " } } }
    ],
    [
      "paths against the first file's folder, outside the repository kept outside",
      "services:\n  a:\n    build: ..\n    volumes: ['..:/w:cached', '../..:/all', '~/.ssh:/s', 'named:/n', {type: bind, source: ./d, target: /d}]\n",
      {
        services: {
          a: {
            build: { context: "/r" },
            volumes: [
              "/r:/w:cached",
              "/:/all",
              "/home/reviewer/.ssh:/s",
              "named:/n",
              { type: "bind", source: "/r/.devcontainer/d", target: "/d" }
            ]
          }
        }
      }
    ]
  ]
  for (const [name, text, expected] of rows) {
    it(name, () => assert.deepStrictEqual(render(text), { ok: true, value: expected }))
  }

  it("a required variable unset fails, as Compose's does", () =>
    // biome-ignore lint/suspicious/noTemplateCurlyInString: Compose's own interpolation
    assert.deepStrictEqual(render("services:\n  a:\n    image: ${IMAGE:?set it}\n"), {
      ok: false,
      why: "required variable IMAGE is missing a value"
    }))

  it("an env_file fails unless the repository holds it", () => {
    const text = "services:\n  a:\n    image: x\n    env_file: .env\n"
    assert.deepStrictEqual(render(text), { ok: false, why: "env_file .devcontainer/.env is not in the repository" })
    assert.deepStrictEqual(
      render(text, (path) => path === ".devcontainer/.env"),
      {
        ok: true,
        value: { services: { a: { image: "x", env_file: ["/r/.devcontainer/.env"] } } }
      }
    )
  })

  it("later files merge over earlier ones", () => {
    const result = renderCompose(
      [
        { path: "a.yml", text: "services:\n  s:\n    image: x\n    ports: ['1:1']\n    command: a\n" },
        { path: "b.yml", text: "services:\n  s:\n    ports: ['1:1', '2:2']\n    command: b\n  t:\n    image: y\n" }
      ],
      root,
      () => false
    )
    assert.deepStrictEqual(result, {
      ok: true,
      value: { services: { s: { image: "x", ports: ["1:1", "2:2"], command: "b" }, t: { image: "y" } } }
    })
  })
})
