import { assert, describe, it } from "@effect/vitest"
import {
  type DaemonServiceSpec,
  invalidServiceSpec,
  keptEnvironment,
  launchdAgentPath,
  renderLaunchdPlist,
  renderSystemdUnit,
  systemdQuote,
  systemdUnitPath
} from "@prbox/domain"

const spec: DaemonServiceSpec = {
  program: "/opt/node/bin/node",
  args: ["--max-semi-space-size=1", "/opt/prbox/prboxd.mjs"],
  environment: [
    ["PATH", "/usr/bin:/bin"],
    ["PRBOX_HOME", "/home/ann/.prbox"]
  ],
  logPath: "/home/ann/.prbox/logs/prboxd.log"
}

describe("systemdQuote (escaping for a systemd setting)", () => {
  const cases: ReadonlyArray<readonly [string, string, boolean, string]> = [
    ["a plain path", "/usr/bin/node", true, '"/usr/bin/node"'],
    ["spaces stay inside the quotes", "/a dir/b c", true, '"/a dir/b c"'],
    ["double quotes are C-escaped", 'say "hi"', true, '"say \\"hi\\""'],
    ["single quotes need nothing", "it's", true, '"it\'s"'],
    ["a backslash is doubled", "a\\b", true, '"a\\\\b"'],
    ["% is a specifier: %%", "100%d", true, '"100%%d"'],
    ["$ where variables expand: $$", "$HOME/x", true, '"$$HOME/x"'],
    ["$ where they do not (program path, Environment=)", "$HOME/x", false, '"$HOME/x"'],
    ["newline and tab as C escapes", "a\nb\tc", true, '"a\\nb\\tc"'],
    ["all at once", '/p %h $X "q" \\', true, '"/p %%h $$X \\"q\\" \\\\"']
  ]
  for (const [name, text, variables, expected] of cases) {
    it(name, () => assert.strictEqual(systemdQuote(text, { variables }), expected))
  }
})

describe("renderSystemdUnit", () => {
  it("runs the launcher with its environment, restarts on failure, starts with the user's session", () => {
    assert.strictEqual(
      renderSystemdUnit(spec),
      [
        "# Written by `prbox daemon install`; `prbox daemon uninstall` removes it.",
        "[Unit]",
        "Description=prbox daemon (prboxd)",
        "",
        "[Service]",
        "Type=exec",
        'ExecStart="/opt/node/bin/node" "--max-semi-space-size=1" "/opt/prbox/prboxd.mjs"',
        'Environment="PATH=/usr/bin:/bin"',
        'Environment="PRBOX_HOME=/home/ann/.prbox"',
        "Restart=on-failure",
        "RestartSec=2s",
        "KillMode=mixed",
        "TimeoutStopSec=30s",
        "",
        "[Install]",
        "WantedBy=default.target",
        ""
      ].join("\n")
    )
  })

  it("escapes the program, the arguments and the environment each by its own rule", () => {
    const unit = renderSystemdUnit({
      ...spec,
      program: "/my $dir/100%/node",
      args: ["/a b/$x%y"],
      environment: [["PRBOX_HOME", '/h "q" $v %p']]
    })
    assert.include(unit, '\nExecStart="/my $dir/100%%/node" "/a b/$$x%%y"\n')
    assert.include(unit, '\nEnvironment="PRBOX_HOME=/h \\"q\\" $v %%p"\n')
  })
})

describe("launchd plist (table test)", () => {
  it("is the agent for the launcher, kept alive after a failure, logging to the daemon's log", () => {
    assert.strictEqual(
      renderLaunchdPlist(spec),
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
        '<plist version="1.0">',
        "<dict>",
        "  <key>Label</key>",
        "  <string>prbox.prboxd</string>",
        "  <key>ProgramArguments</key>",
        "  <array>",
        "    <string>/opt/node/bin/node</string>",
        "    <string>--max-semi-space-size=1</string>",
        "    <string>/opt/prbox/prboxd.mjs</string>",
        "  </array>",
        "  <key>EnvironmentVariables</key>",
        "  <dict>",
        "    <key>PATH</key>",
        "    <string>/usr/bin:/bin</string>",
        "    <key>PRBOX_HOME</key>",
        "    <string>/home/ann/.prbox</string>",
        "  </dict>",
        "  <key>RunAtLoad</key>",
        "  <true/>",
        "  <key>KeepAlive</key>",
        "  <dict>",
        "    <key>SuccessfulExit</key>",
        "    <false/>",
        "  </dict>",
        "  <key>StandardOutPath</key>",
        "  <string>/home/ann/.prbox/logs/prboxd.log</string>",
        "  <key>StandardErrorPath</key>",
        "  <string>/home/ann/.prbox/logs/prboxd.log</string>",
        "</dict>",
        "</plist>",
        ""
      ].join("\n")
    )
  })

  const escaping: ReadonlyArray<readonly [string, string, string]> = [
    ["spaces, % and $ are plain XML text", "/a b/100%/$x", "<string>/a b/100%/$x</string>"],
    ["& < > are entities", "/a&b/<c>", "<string>/a&amp;b/&lt;c&gt;</string>"],
    ["quotes are entities", `/"q"/'s'`, "<string>/&quot;q&quot;/&apos;s&apos;</string>"]
  ]
  for (const [name, path, expected] of escaping) {
    it(name, () => {
      const plist = renderLaunchdPlist({ ...spec, program: path, environment: [["PRBOX_HOME", path]] })
      assert.strictEqual(plist.split(`    ${expected}\n`).length, 3, plist)
    })
  }
})

describe("invalidServiceSpec", () => {
  const cases: ReadonlyArray<readonly [string, Partial<DaemonServiceSpec>, "systemd" | "launchd", string | undefined]> =
    [
      ["a valid spec", {}, "systemd", undefined],
      ["a relative program", { program: "node" }, "launchd", "the daemon's program must be an absolute path, not node"],
      ["a relative log", { logPath: "p.log" }, "launchd", "the daemon's log must be an absolute path, not p.log"],
      [
        "a bad variable name",
        { environment: [["A-B", "x"]] },
        "systemd",
        'not a valid environment variable name: "A-B"'
      ],
      ["a control character XML cannot carry", { args: ["a\u0001b"] }, "launchd", 'a control character in "a\\u0001b"'],
      ["newline and tab in arguments can be escaped", { args: ["a\nb\tc"] }, "systemd", undefined],
      [
        "systemd: a quote in the program's path",
        { program: "/a'b/node" },
        "systemd",
        `systemd cannot run a program whose path has a quote, a backslash, a tab or a newline: "/a'b/node"`
      ],
      [
        "systemd: a backslash in the program's path",
        { program: "/a\\b/node" },
        "systemd",
        'systemd cannot run a program whose path has a quote, a backslash, a tab or a newline: "/a\\\\b/node"'
      ],
      ["launchd: quotes and backslashes are fine", { program: `/a'"\\b/node` }, "launchd", undefined],
      [
        "systemd: spaces, % and $ in the program's path are fine",
        { program: "/a b/100%/$x/node" },
        "systemd",
        undefined
      ]
    ]
  for (const [name, change, manager, expected] of cases) {
    it(name, () => assert.strictEqual(invalidServiceSpec({ ...spec, ...change }, manager), expected))
  }
})

describe("where the files go", () => {
  const cases: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["the manager's XDG_CONFIG_HOME", { XDG_CONFIG_HOME: "/cfg/", HOME: "/h" }, "/cfg/systemd/user/prboxd.service"],
    [
      "a relative XDG_CONFIG_HOME is ignored",
      { XDG_CONFIG_HOME: "cfg", HOME: "/h" },
      "/h/.config/systemd/user/prboxd.service"
    ],
    ["the manager's HOME", { HOME: "/h" }, "/h/.config/systemd/user/prboxd.service"],
    ["else the user's home", {}, "/home/ann/.config/systemd/user/prboxd.service"]
  ]
  for (const [name, env, expected] of cases) {
    it(`systemd: ${name}`, () => assert.strictEqual(systemdUnitPath(env, "/home/ann"), expected))
  }
  it("launchd: ~/Library/LaunchAgents", () =>
    assert.strictEqual(launchdAgentPath("/Users/ann/"), "/Users/ann/Library/LaunchAgents/prbox.prboxd.plist"))
})

describe("keptEnvironment", () => {
  it("keeps what the daemon needs, sorted, and never anything else (a token stays out of the unit)", () =>
    assert.deepStrictEqual(
      keptEnvironment({
        PRBOXD_MAX_REQUESTS: "9",
        PATH: "/usr/bin",
        GITHUB_TOKEN: "secret",
        DOCKER_HOST: "unix:///d.sock",
        PRBOX_DEBIAN_MIRROR: "",
        HOME: "/h",
        NODE_OPTIONS: "--inspect"
      }),
      { DOCKER_HOST: "unix:///d.sock", PATH: "/usr/bin", PRBOXD_MAX_REQUESTS: "9" }
    ))
})
