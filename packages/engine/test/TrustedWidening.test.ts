import { noWidening, type Widening } from "@prbox/devcontainer"
import { describe, expect, it } from "vitest"
import { decideWidening } from "../src/environment/TrustedWidening.ts"

const rows: ReadonlyArray<readonly [string, Partial<Widening>, ReturnType<typeof decideWidening>]> = [
  ["nothing asked", {}, { privileged: false, capAdd: [], securityOpt: [], mounts: [], ignored: [] }],
  [
    "runArgs flags in both spellings",
    {
      runArgs: ["--cap-add", "SYS_PTRACE", "--security-opt=seccomp=unconfined", "--privileged", "--cap-add=NET_ADMIN"]
    },
    {
      privileged: true,
      capAdd: ["SYS_PTRACE", "NET_ADMIN"],
      securityOpt: ["seccomp=unconfined"],
      mounts: [],
      ignored: []
    }
  ],
  [
    "binds from runArgs and mounts; volumes and unknown flags are ignored",
    {
      runArgs: ["-v", "/home/me/cache:/cache:ro", "--network=host", "--volume=named:/data"],
      mounts: [
        { type: "bind", source: "/home/me/.ssh", target: "/root/.ssh", readOnly: false },
        { type: "volume", source: "vol", target: "/vol", readOnly: false }
      ]
    },
    {
      privileged: false,
      capAdd: [],
      securityOpt: [],
      mounts: [
        { source: "/home/me/.ssh", target: "/root/.ssh", readOnly: false },
        { source: "/home/me/cache", target: "/cache", readOnly: true }
      ],
      ignored: ["mount volume /vol", "runArgs --network=host", "volume named:/data"]
    }
  ],
  [
    "what prbox owns is not handed over",
    { workspaceMount: "source=/x,target=/y,type=bind", appPort: [3000], buildOptions: ["--network=host"] },
    {
      privileged: false,
      capAdd: [],
      securityOpt: [],
      mounts: [],
      ignored: [
        "workspaceMount (prbox mounts the PR's workspace)",
        "appPort (prbox publishes code-server only; previews come later)",
        "build.options"
      ]
    }
  ]
]

describe("a trusted repository's widening", () => {
  it.each(rows)("%s", (_name, asked, expected) => {
    expect(decideWidening({ ...noWidening, ...asked })).toEqual(expected)
  })
})
