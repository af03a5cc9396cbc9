# Serves one HTTP request on stdin/stdout: /healthz, /login and / the way
# code-server answers them. Header values are matched, never evaluated.
cr=$(printf '\r')

respond() {
  status=$1 type=$2 body=$3
  shift 3
  printf 'HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %s\r\nConnection: close\r\n' "$status" "$type" "${#body}"
  for header in "$@"; do printf '%s\r\n' "$header"; done
  printf '\r\n%s' "$body"
  exit 0
}

login_page='<!doctype html><title>code-server login</title><form method="post" action="./login"><input type="password" name="password"><button>Submit</button></form>'

read -r -t 10 method target _ || exit 0
path=${target%%\?*}
# Request lines go to the container's stderr (its log), like code-server's own log.
printf '%s %s\n' "$method" "$path" >&2

content_length=0
cookie=
while IFS= read -r -t 10 line; do
  line=${line%"$cr"}
  [ -z "$line" ] && break
  case $line in
  [Cc][Oo][Nn][Tt][Ee][Nn][Tt]-[Ll][Ee][Nn][Gg][Tt][Hh]:*) content_length=${line#*:} ;;
  [Cc][Oo][Oo][Kk][Ii][Ee]:*) cookie=${line#*:} ;;
  esac
done
content_length=${content_length# }
case $content_length in
'' | *[!0-9]*) respond "400 Bad Request" text/plain "bad content-length" ;;
esac
[ "$content_length" -gt 8192 ] && respond "413 Payload Too Large" text/plain "body too large"
body=
[ "$content_length" -gt 0 ] && read -r -t 10 -n "$content_length" body

# The session cookie is derived from the password, so only a login with the
# right password can produce it; without PASSWORD there is no valid session.
session=
[ -n "${PASSWORD-}" ] && session=$(printf 'prbox:%s' "$PASSWORD" | sha256sum | cut -d ' ' -f 1)
has_session() {
  [ -n "$session" ] || return 1
  case "; ${cookie# };" in *"; code-server-session=$session;"*) return 0 ;; esac
  return 1
}

case "$method $path" in
"GET /healthz")
  # A test can replace the answer (nonsense, a malformed heartbeat) by writing it here.
  [ -f /tmp/prbox-healthz ] && respond "200 OK" application/json "$(cat /tmp/prbox-healthz)"
  heartbeat=$(cat /tmp/prbox-heartbeat 2>/dev/null)
  case $heartbeat in '' | *[!0-9]*) heartbeat=$PRBOX_STARTED_MS ;; esac
  respond "200 OK" application/json "{\"status\":\"alive\",\"lastHeartbeat\":$heartbeat}"
  ;;
"GET /login") respond "200 OK" text/html "$login_page" ;;
"POST /login")
  password=
  rest=$body
  while [ -n "$rest" ]; do
    field=${rest%%&*}
    case $rest in *\&*) rest=${rest#*&} ;; *) rest= ;; esac
    case $field in password=*)
      value=${field#password=}
      password=$(httpd -d "${value//+/ }")
      ;; esac
  done
  if [ -n "$session" ] && [ "$password" = "$PASSWORD" ]; then
    respond "302 Found" text/html "" "Location: ./" "Set-Cookie: code-server-session=$session; Path=/; HttpOnly"
  fi
  respond "401 Unauthorized" text/html "$login_page"
  ;;
"GET /")
  has_session && respond "200 OK" text/html '<!doctype html><title>code-server</title><p>workbench</p>'
  respond "302 Found" text/html "" "Location: ./login"
  ;;
"GET "*) respond "404 Not Found" text/plain "not found" ;;
*) respond "405 Method Not Allowed" text/plain "method not allowed" ;;
esac
