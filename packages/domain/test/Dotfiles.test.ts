import { assert, describe, it } from "@effect/vitest"
import { DOTFILES_INSTALL_NAMES, dotfilesSource, dotfilesTarget } from "@prbox/domain"

describe("dotfiles", () => {
  it("tries the devcontainers CLI's install names, in its order", () => {
    assert.deepStrictEqual(DOTFILES_INSTALL_NAMES, [
      "install.sh",
      "install",
      "bootstrap.sh",
      "bootstrap",
      "script/bootstrap",
      "setup.sh",
      "setup",
      "script/setup"
    ])
  })

  describe("dotfilesSource", () => {
    const cases: ReadonlyArray<readonly [string, string, ReturnType<typeof dotfilesSource>]> = [
      ["owner/name is a GitHub repository", "me/dotfiles", { _tag: "Url", url: "https://github.com/me/dotfiles.git" }],
      ["a URL as given", "https://git.example/me/dots.git", { _tag: "Url", url: "https://git.example/me/dots.git" }],
      ["an scp-like address", "git@git.example:me/dots.git", { _tag: "Url", url: "git@git.example:me/dots.git" }],
      ["an absolute path, normalised", "/srv/dots/../dots/", { _tag: "Path", path: "/srv/dots" }],
      ["~/ from the user's home", "~/src/dots", { _tag: "Path", path: "/home/ann/src/dots" }],
      ["./ from the user's home", "./dots", { _tag: "Path", path: "/home/ann/dots" }],
      ["../ from the user's home", "../shared/dots", { _tag: "Path", path: "/home/shared/dots" }]
    ]
    for (const [name, repository, expected] of cases) {
      it(name, () => assert.deepStrictEqual(dotfilesSource(repository, "/home/ann"), expected))
    }
  })

  describe("dotfilesTarget", () => {
    const inside: ReadonlyArray<readonly [string, string]> = [
      ["~/dotfiles", "dotfiles"],
      ["~/.config/dots/", ".config/dots"],
      ["dots", "dots"],
      ["./a/./b", "a/b"]
    ]
    for (const [targetPath, relative] of inside) {
      it(`${targetPath} is ~/${relative}`, () =>
        assert.deepStrictEqual(dotfilesTarget(targetPath), { _tag: "Inside", relative }))
    }
    const refused: ReadonlyArray<readonly [string, RegExp]> = [
      ["/etc", /inside the sandbox user's home/],
      ["~root/x", /inside the sandbox user's home/],
      ["~/../x", /must not leave the home/],
      ["a/../../x", /must not leave the home/],
      ["~", /not the home/],
      ["~/", /not the home/],
      ["", /not the home/],
      ["a\nb", /control character/]
    ]
    for (const [targetPath, reason] of refused) {
      it(`${JSON.stringify(targetPath)} is refused`, () => {
        const target = dotfilesTarget(targetPath)
        assert.strictEqual(target._tag, "Refused")
        if (target._tag === "Refused") assert.match(target.reason, reason)
      })
    }
  })
})
