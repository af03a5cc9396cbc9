# Sourced by scripts/setup: makes sure a Docker engine answers. On a root
# Debian machine without one, installs docker.io and starts dockerd detached.
# It never stops an engine, so one we did not start is never touched.
docker_answers() { timeout 10 docker info >/dev/null 2>&1; }

ensure_docker_engine() {
  if docker_answers; then return 0; fi
  if [ -n "${DOCKER_HOST:-}" ]; then
    prbox_log "DOCKER_HOST=$DOCKER_HOST does not answer; start that engine first"; return 1
  fi
  if [ "$(id -u)" != 0 ] || ! [ -f /etc/debian_version ]; then
    prbox_log "no Docker engine answers; start one (prbox needs Docker), then rerun"; return 1
  fi
  if ! command -v dockerd >/dev/null 2>&1; then
    prbox_log "installing Debian's docker.io"
    apt_install docker.io
  fi
  local log="$PRBOX_CACHE/dockerd.log"
  mkdir -p "$PRBOX_CACHE"
  prbox_log "starting dockerd (log: $log)"
  # Detached, with no inherited output, so callers such as CI do not wait on it.
  setsid dockerd >"$log" 2>&1 </dev/null &
  local waited=0
  until docker_answers; do
    if [ "$waited" -ge 60 ]; then
      prbox_log "dockerd did not answer within 60 s; last lines of $log:"; tail -n 20 "$log" >&2; return 1
    fi
    sleep 1; waited=$((waited + 1))
  done
}

apt_updated=
apt_install() {
  if [ -z "$apt_updated" ]; then apt-get update -qq >&2; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2
}
