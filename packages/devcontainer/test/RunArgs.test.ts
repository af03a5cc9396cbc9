import { assert, describe, it } from "@effect/vitest"
import { classifyBuildOptions, classifyRunArgs, dockerSizeMb, isHostGateway, type RunArg } from "../src/index.ts"

const honoured = (flag: string, effect: Extract<RunArg, { _tag: "Honoured" }>["effect"], index = 0): RunArg => ({
  _tag: "Honoured",
  index,
  flag,
  effect
})
const ignored = (flag: string, why: string, index = 0): RunArg => ({ _tag: "Ignored", index, flag, why })
const widening = (flag: string, args: ReadonlyArray<string>, why: string, index = 0): RunArg => ({
  _tag: "Widening",
  index,
  flag,
  args,
  why
})

const widens = "widens the container"
const unknown = "is not a flag prbox knows, and an unknown flag may widen the container"
const notUnderstood = "its value is not understood"
const hostEnv = "passes a variable of the host's environment, which prbox never reads"
const labels = "labels are read by tools on this machine (proxies, updaters): prbox sets its own"
const gateway = "points a name at this machine (the host's gateway)"
const hostStorage = "mounts storage from the host"

/**
 * One flag per row, in each form it is written: the separate value
 * (`--flag value`) and the joined one (`--flag=value`) give the same answer.
 */
const single: ReadonlyArray<readonly [string, ReadonlyArray<string>, RunArg]> = [
  ["--name: prbox names its containers", ["--name", "web"], ignored("--name", "prbox names its containers itself")],
  ["--init", ["--init"], honoured("--init", { _tag: "Init" })],
  ["--init=true", ["--init=true"], honoured("--init", { _tag: "Init" })],
  ["--init=false", ["--init=false"], ignored("--init", "prbox always runs Docker's init")],
  ["--hostname", ["--hostname", "review"], honoured("--hostname", { _tag: "Hostname", hostname: "review" })],
  ["-h", ["-h", "review"], honoured("-h", { _tag: "Hostname", hostname: "review" })],
  ["a hostname that is not one", ["--hostname", "a b"], ignored("--hostname", notUnderstood)],
  ["--label", ["--label", "traefik.enable=true"], ignored("--label", labels)],
  ["-l", ["-l", "x=y"], ignored("-l", labels)],
  ["-e NAME=value", ["-e", "MODE=dev"], honoured("-e", { _tag: "Env", name: "MODE", value: "dev" })],
  ["-eNAME=value", ["-eMODE=dev"], honoured("-e", { _tag: "Env", name: "MODE", value: "dev" })],
  ["--env NAME=a=b", ["--env", "URL=a=b"], honoured("--env", { _tag: "Env", name: "URL", value: "a=b" })],
  ["-e NAME (the host's value)", ["-e", "HOME"], ignored("-e", hostEnv)],
  [
    "--env-file",
    ["--env-file", ".env"],
    widening("--env-file", ["--env-file", ".env"], "reads a file on this machine")
  ],
  [
    "--add-host to an address",
    ["--add-host", "api.local:10.1.2.3"],
    honoured("--add-host", { _tag: "ExtraHost", entry: "api.local:10.1.2.3" })
  ],
  [
    "--add-host name=address",
    ["--add-host", "api.local=127.0.0.1"],
    honoured("--add-host", { _tag: "ExtraHost", entry: "api.local:127.0.0.1" })
  ],
  [
    "--add-host to an IPv6 address",
    ["--add-host", "v6.local:2001:db8::33"],
    honoured("--add-host", { _tag: "ExtraHost", entry: "v6.local:2001:db8::33" })
  ],
  [
    "--add-host to host-gateway",
    ["--add-host", "host.docker.internal:host-gateway"],
    widening("--add-host", ["--add-host", "host.docker.internal:host-gateway"], gateway)
  ],
  [
    "--add-host to the bridge's gateway",
    ["--add-host", "host.local:172.17.0.1"],
    widening("--add-host", ["--add-host", "host.local:172.17.0.1"], gateway)
  ],
  ["--add-host of a name alone", ["--add-host", "api.local"], ignored("--add-host", notUnderstood)],
  [
    "--security-opt no-new-privileges",
    ["--security-opt", "no-new-privileges"],
    honoured("--security-opt", { _tag: "NoNewPrivileges" })
  ],
  [
    "--security-opt no-new-privileges:true",
    ["--security-opt", "no-new-privileges:true"],
    honoured("--security-opt", { _tag: "NoNewPrivileges" })
  ],
  [
    "--security-opt no-new-privileges:false",
    ["--security-opt", "no-new-privileges:false"],
    ignored("--security-opt", "it is Docker's default")
  ],
  [
    "--security-opt seccomp=unconfined",
    ["--security-opt", "seccomp=unconfined"],
    widening("--security-opt", ["--security-opt", "seccomp=unconfined"], widens)
  ],
  ["--cpus", ["--cpus", "2.5"], honoured("--cpus", { _tag: "Cpus", cpus: 2.5 })],
  ["--cpus of nothing", ["--cpus", "0"], ignored("--cpus", notUnderstood)],
  ["--memory", ["--memory", "4g"], honoured("--memory", { _tag: "Memory", mb: 4096 })],
  ["-m", ["-m", "512m"], honoured("-m", { _tag: "Memory", mb: 512 })],
  ["--memory in bytes", ["--memory", "1048577"], honoured("--memory", { _tag: "Memory", mb: 2 })],
  ["--memory of words", ["--memory", "lots"], ignored("--memory", notUnderstood)],
  ["--shm-size", ["--shm-size", "2gb"], honoured("--shm-size", { _tag: "ShmSize", mb: 2048 })],
  [
    "-v a named volume",
    ["-v", "cache:/home/node/.cache"],
    honoured("-v", { _tag: "Volume", source: "cache", target: "/home/node/.cache", readOnly: false })
  ],
  [
    "-v an anonymous volume",
    ["-v", "/data"],
    honoured("-v", { _tag: "Volume", source: null, target: "/data", readOnly: false })
  ],
  [
    "--volume read-only, with a variable",
    ["--volume", `\${localWorkspaceFolderBasename}-nm:/w/node_modules:ro`],
    honoured("--volume", {
      _tag: "Volume",
      source: `\${localWorkspaceFolderBasename}-nm`,
      target: "/w/node_modules",
      readOnly: true
    })
  ],
  ["-v a bind", ["-v", "/etc:/host-etc"], widening("-v", ["-v", "/etc:/host-etc"], hostStorage)],
  ["-v a relative bind", ["-v", "./data:/data"], widening("-v", ["-v", "./data:/data"], hostStorage)],
  [
    "-v the Docker socket",
    ["-v", "/var/run/docker.sock:/var/run/docker.sock"],
    widening("-v", ["-v", "/var/run/docker.sock:/var/run/docker.sock"], "mounts the Docker socket")
  ],
  [
    "--mount a volume",
    ["--mount", "type=volume,source=nm,target=/w/node_modules"],
    honoured("--mount", { _tag: "Volume", source: "nm", target: "/w/node_modules", readOnly: false })
  ],
  [
    "--mount a bind",
    ["--mount", "type=bind,source=/home,target=/h"],
    widening("--mount", ["--mount", "type=bind,source=/home,target=/h"], hostStorage)
  ],
  ["--privileged", ["--privileged"], widening("--privileged", ["--privileged"], widens)],
  ["--privileged=false", ["--privileged=false"], ignored("--privileged", "it is Docker's default")],
  ["--cap-add", ["--cap-add", "SYS_PTRACE"], widening("--cap-add", ["--cap-add", "SYS_PTRACE"], widens)],
  [
    "--network host",
    ["--network", "host"],
    widening("--network", ["--network", "host"], "joins the container to another network")
  ],
  ["--net", ["--net", "host"], widening("--net", ["--net", "host"], "joins the container to another network")],
  [
    "--device",
    ["--device", "/dev/fuse"],
    widening("--device", ["--device", "/dev/fuse"], "gives the container a device of this machine")
  ],
  ["-p", ["-p", "3000:3000"], widening("-p", ["-p", "3000:3000"], "publishes a port on this machine")],
  ["-P", ["-P"], widening("-P", ["-P"], "publishes a port on this machine")],
  ["--pid host", ["--pid", "host"], widening("--pid", ["--pid", "host"], "shares a namespace of this machine")],
  ["--gpus", ["--gpus", "all"], widening("--gpus", ["--gpus", "all"], "gives the container this machine's GPUs")],
  [
    "an unknown flag with a value",
    ["--ulimit", "nofile=1024"],
    widening("--ulimit", ["--ulimit", "nofile=1024"], unknown)
  ],
  ["an unknown flag alone", ["--rm"], widening("--rm", ["--rm"], unknown)],
  ["joined short flags", ["-it"], widening("-it", ["-it"], unknown)],
  ["a word that is no flag", ["bash"], widening("an argument", ["bash"], unknown)],
  ["a flag name that is PR text", ["--$(id)"], widening("an argument", ["--$(id)"], unknown)],
  ["a value-taking flag at the end", ["-e"], ignored("-e", notUnderstood)]
]

/** `["--flag", "value"]` as `["--flag=value"]`. */
const joined = (args: ReadonlyArray<string>): ReadonlyArray<string> | undefined =>
  args.length === 2 && (args[0] ?? "").startsWith("--") ? [`${args[0]}=${args[1]}`] : undefined

describe("classifyRunArgs", () => {
  for (const [name, args, expected] of single) {
    it(name, () => assert.deepStrictEqual(classifyRunArgs(args), [expected]))
    const other = joined(args)
    if (other !== undefined && expected._tag !== "Widening") {
      it(`${name}, as ${other[0]?.split("=")[0]}=…`, () => assert.deepStrictEqual(classifyRunArgs(other), [expected]))
    }
    if (other !== undefined && expected._tag === "Widening") {
      it(`${name}, as ${other[0]?.split("=")[0]}=…`, () =>
        assert.deepStrictEqual(classifyRunArgs(other), [{ ...expected, args: other }]))
    }
  }

  it("several flags keep their places; a widening flag takes its value along", () =>
    assert.deepStrictEqual(
      classifyRunArgs(["--init", "--cap-add", "SYS_ADMIN", "-e", "A=1", "--unknown", "--name=x"]),
      [
        honoured("--init", { _tag: "Init" }, 0),
        widening("--cap-add", ["--cap-add", "SYS_ADMIN"], widens, 1),
        honoured("-e", { _tag: "Env", name: "A", value: "1" }, 3),
        widening("--unknown", ["--unknown"], unknown, 5),
        ignored("--name", "prbox names its containers itself", 6)
      ]
    ))

  it("a flag after a boolean one is its own flag, not its value", () =>
    assert.deepStrictEqual(classifyRunArgs(["--privileged", "--init"]), [
      widening("--privileged", ["--privileged"], widens, 0),
      honoured("--init", { _tag: "Init" }, 1)
    ]))
})

describe("classifyBuildOptions", () => {
  const rows: ReadonlyArray<readonly [string, ReadonlyArray<string>, RunArg]> = [
    ["--build-arg", ["--build-arg", "V=1"], honoured("--build-arg", { _tag: "BuildArg", name: "V", value: "1" })],
    ["--build-arg=", ["--build-arg=V=1"], honoured("--build-arg", { _tag: "BuildArg", name: "V", value: "1" })],
    ["--build-arg of the host's", ["--build-arg", "V"], ignored("--build-arg", hostEnv)],
    ["--pull", ["--pull"], ignored("--pull", "prbox decides when an image is pulled")],
    ["--progress=plain", ["--progress=plain"], ignored("--progress", "prbox shows the build's progress itself")],
    ["--network=host", ["--network=host"], widening("--network", ["--network=host"], "reaches the host")],
    [
      "--add-host",
      ["--add-host", "x:1.2.3.4"],
      widening("--add-host", ["--add-host", "x:1.2.3.4"], "reaches the host")
    ],
    [
      "--secret",
      ["--secret", "id=npm,src=/home/me/.npmrc"],
      widening("--secret", ["--secret", "id=npm,src=/home/me/.npmrc"], "reaches the host")
    ]
  ]
  for (const [name, args, expected] of rows) {
    it(name, () => assert.deepStrictEqual(classifyBuildOptions(args), [expected]))
  }
})

describe("sizes and gateways", () => {
  const sizes: ReadonlyArray<readonly [string, number | undefined]> = [
    ["512m", 512],
    ["512M", 512],
    ["1g", 1024],
    ["1gb", 1024],
    ["2GiB", 2048],
    ["1.5g", 1536],
    ["1024k", 1],
    ["1", 1],
    ["0", undefined],
    ["-1g", undefined],
    ["4 x", undefined]
  ]
  for (const [text, mb] of sizes) it(`${text} → ${mb}`, () => assert.strictEqual(dockerSizeMb(text), mb))
  const gateways: ReadonlyArray<readonly [string, boolean]> = [
    ["host-gateway", true],
    ["172.17.0.1", true],
    ["172.31.0.1", true],
    ["172.18.0.2", false],
    ["172.32.0.1", false],
    ["10.0.0.1", false],
    ["127.0.0.1", false]
  ]
  for (const [address, expected] of gateways) {
    it(`${address} is the host's gateway: ${expected}`, () => assert.strictEqual(isHostGateway(address), expected))
  }
})
