# serve-setup.sh, sourced by endpoint.sh and gateways.sh from the
# checkout's root once $WORK/zero is built: starts zero serve on a fresh
# $ZERO_HOME ($WORK/home, as HOME_DIR) on a loopback port, signs the owner in
# with the link it prints, as a browser does, and defines
#   api METHOD PATH [JSON]   an owner's API request (BASE, JAR, CSRF)
#   add_server CONFIG        adds, approves, enables and tests a server;
#                            prints its id
# SERVE is zero serve's pid; the caller stops it.
HOME_DIR="$WORK/home"
rm -rf "$HOME_DIR"
ZERO_HOME="$HOME_DIR" "$WORK/zero" serve --addr 127.0.0.1:0 2>"$WORK/serve.log" &
SERVE=$!
for _ in $(seq 300); do grep -q '/login?token=' "$WORK/serve.log" && break; sleep 0.1; done
LINK=$(grep -o 'http://[^ ]*/login?token=[^ ]*' "$WORK/serve.log")
BASE=${LINK%%/login*}
JAR="$WORK/jar"
curl -sf -c "$JAR" -o /dev/null "$LINK"
CSRF=$(curl -sf -b "$JAR" "$BASE/api/session" | python3 -c 'import json,sys; print(json.load(sys.stdin)["csrf_token"])')
api() { curl -sf -b "$JAR" -H "X-CSRF-Token: $CSRF" -H "Sec-Fetch-Site: same-origin" -H "Origin: $BASE" -H 'Content-Type: application/json' -X "$1" "$BASE$2" ${3:+-d "$3"}; }
add_server() {
  local fp id
  fp=$(api POST /api/servers/preview "{\"config\":$1}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["fingerprint"])')
  id=$(api POST /api/servers "{\"config\":$1,\"fingerprint\":\"$fp\",\"enable\":true}" | python3 -c 'import json,sys; print(json.load(sys.stdin)["server"]["id"])')
  api POST "/api/servers/$id/test" >/dev/null
  echo "$id"
}
