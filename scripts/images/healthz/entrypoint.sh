# Arguments are code-server's (--bind-addr, --auth, a folder); they are ignored.
PRBOX_STARTED_MS="$(date +%s)000"
export PRBOX_STARTED_MS
# This shell may be PID 1, which gets no default signal handling: stop the
# server and exit on TERM/INT so `docker stop` returns at once.
trap 'kill "$server" 2>/dev/null; exit 0' TERM INT
# With -e, nc forks a handler per connection once -l is given twice, and
# takes the number of -l as its listen backlog: 64 of them, so that a burst of
# concurrent requests is queued instead of dropped (and retried a second later).
backlog=$(printf 'l%.0s' $(seq 64))
nc "-$backlog" -p 8080 -e /bin/sh /srv/prbox/handler.sh &
server=$!
echo "healthz: listening on 8080"
wait "$server"
