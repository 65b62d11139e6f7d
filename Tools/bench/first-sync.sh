#!/usr/bin/env bash
# A device's first sync with the real programs (D64, D65): a new account imports N CSV rows and
# runs its first `trendy sync`, then a second, fresh device downloads the account. Prints wall
# time, CPU and peak RSS of each `trendy sync` (GNU time).
#
#   Tools/bench/first-sync.sh [BIN_DIR] [ROWS] [ORDER]
#     BIN_DIR  where `trendy` and `trendy-server` are (default .build/release)
#     ROWS     CSV rows (default 140000)
#     ORDER    `random` (times in no order, as a history imported after the fact) or `sorted`
#
# Compare two builds by running it with each BIN_DIR, alternating. The server keeps its default
# request limits (a burst of 600, then 100 a second per user), which an upload in small batches
# meets (D66); TRENDY_SERVER_ARGS adds arguments to `trendy-server`, e.g.
# TRENDY_SERVER_ARGS="--api-burst 100000 --api-rate 10000" to time the upload alone.
set -euo pipefail
BIN=$(cd "${1:-.build/release}" && pwd)
ROWS=${2:-140000}
ORDER=${3:-random}
WORK=$(mktemp -d /tmp/first-sync.XXXXXX)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
python3 - "$ROWS" "$ORDER" > "$WORK/events.csv" <<'PY'
import datetime, random, sys
rows, order = int(sys.argv[1]), sys.argv[2]
random.seed(7)
types = ["Coffee", "Walk", "Gym", "Read", "Sleep", "Meeting", "Water", "Run"]
words = ["coffee", "espresso", "morning", "walk", "park", "gym", "felt", "great", "tired", "team", "book"]
start = datetime.datetime(2022, 1, 1)
lines = []
for _ in range(rows):
    at = start + datetime.timedelta(seconds=random.randint(0, 4 * 365 * 86400))
    note = " ".join(random.choice(words) for _ in range(random.randint(0, 6)))
    lines.append((at.isoformat() + "Z", random.choice(types), note))
if order == "sorted":
    lines.sort()
print("type,timestamp,notes")
for at, kind, note in lines:
    print(f"{kind},{at},{note}")
PY
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# shellcheck disable=SC2086 # TRENDY_SERVER_ARGS is split into arguments on purpose
"$BIN/trendy-server" --port "$PORT" --db "$WORK/server.sqlite" ${TRENDY_SERVER_ARGS:-} > "$WORK/server.log" 2>&1 &
SERVER=$!
sleep 2
export TRENDY_API_URL="http://127.0.0.1:$PORT"
echo 'first-sync-password-1' | "$BIN/trendy" signup --email bench@example.com --password-stdin \
    --data-dir "$WORK/a" > /dev/null
"$BIN/trendy" import "$WORK/events.csv" --data-dir "$WORK/a" | tail -1
/usr/bin/time -f "first sync after the import: %e s wall, %U s user, %S s system, %M KB peak" \
    "$BIN/trendy" sync --data-dir "$WORK/a" 2>&1 | grep -E "^Sync [a-z_]+:|first sync"
echo 'first-sync-password-1' | "$BIN/trendy" login --email bench@example.com --password-stdin \
    --data-dir "$WORK/b" > /dev/null
/usr/bin/time -f "a new device's download: %e s wall, %U s user, %S s system, %M KB peak" \
    "$BIN/trendy" sync --data-dir "$WORK/b" 2>&1 | grep -E "^Sync [a-z_]+:|download"
