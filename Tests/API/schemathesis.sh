#!/usr/bin/env bash
# The whole-spec check (issue 20): schemathesis, every check, a fixed seed, a real token,
# against the real server. Usage: Tests/API/schemathesis.sh SCHEMATHESIS_BIN SERVER_BIN
# Exits non-zero on any finding. Settings and the per-operation reasons are in schemathesis.toml.
set -euo pipefail
st=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
server_bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
# Admin routes on (with a token nobody sends) so their 401 is what is tested, and rate limits
# out of the way: the fuzzer sends thousands of requests from one address.
TRENDY_ADMIN_TOKEN="admin-$(python3 -c 'import secrets; print(secrets.token_hex(16))')" \
  "$server_bin" --port "$port" --db :memory: --bcrypt-cost 4 --mail-dir "$work/mail" \
  --api-rate 100000 --api-burst 100000 --auth-rate 100000 --auth-burst 100000 > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null 2>&1 && break; sleep 0.1; done
token=$(curl -sf -X POST "http://127.0.0.1:$port/auth/v1/signup" -H 'Content-Type: application/json' \
  -d '{"email":"schemathesis@example.com","password":"password-schemathesis-1"}' |
  python3 -c "import sys, json; print(json.load(sys.stdin)['access_token'])")
cd "$work"
"$st" --config-file "$here/schemathesis.toml" run "$root/docs/api/openapi.yaml" \
  --url "http://127.0.0.1:$port" -H "Authorization: Bearer $token" --seed "${SCHEMATHESIS_SEED:-19}"
