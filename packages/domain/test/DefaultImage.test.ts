import { assert, describe, it } from "@effect/vitest"
import { defaultImageRefusal } from "@prbox/domain"

describe("defaultImageRefusal", () => {
  const cases: ReadonlyArray<readonly [string, number | undefined, string, RegExp | undefined]> = [
    ["root on Linux builds", 0, "linux", undefined],
    [
      "a user on Linux is told to use sudo or the config key",
      1000,
      "linux",
      /`sudo prbox image build`.*"image" in \$PRBOX_HOME\/config\.json/
    ],
    ["no uid (not POSIX) is not root", undefined, "linux", /needs root/],
    [
      "root elsewhere cannot debootstrap",
      0,
      "darwin",
      /Linux only.*on darwin, set "image" in \$PRBOX_HOME\/config\.json/
    ]
  ]
  for (const [name, uid, platform, expected] of cases) {
    it(name, () => {
      const refusal = defaultImageRefusal(uid, platform)
      if (expected === undefined) assert.isUndefined(refusal)
      else assert.match(refusal ?? "", expected)
    })
  }
})
