#!/usr/bin/env bash
# A new device's first download killed part way, then run again (D69), with the real programs:
# an account of N events (imported from CSV and uploaded by a first device), a fresh device's
# `trendy sync` killed with SIGKILL after KILL_AT seconds, then `trendy sync` again. For the
# baseline, another fresh device downloads the whole account in one go, in the same run.
# Prints each `trendy sync`'s wall time, CPU and what it pulled, and the events each device holds.
#
#   Tools/bench/killed-download.sh [BIN_DIR] [ROWS] [KILL_AT]
#     BIN_DIR  where `trendy` and `trendy-server` are (default .build/release)
#     ROWS     events in the account (default 140000)
#     KILL_AT  seconds into the first try (default 4)
set -euo pipefail
BIN=$(cd "${1:-.build/release}" && pwd)
ROWS=${2:-140000}
KILL_AT=${3:-4}
WORK=$(mktemp -d /tmp/killed-download.XXXXXX)
trap 'kill "$SERVER" 2>/dev/null || true; rm -rf "$WORK"' EXIT
python3 - "$ROWS" > "$WORK/events.csv" <<'PY'
import datetime, random, sys
random.seed(7)
types = ["Coffee", "Walk", "Gym", "Read", "Sleep", "Meeting", "Water", "Run"]
start = datetime.datetime(2022, 1, 1)
print("type,timestamp,notes")
for i in range(int(sys.argv[1])):
    at = start + datetime.timedelta(seconds=random.randint(0, 4 * 365 * 86400))
    print(f"{random.choice(types)},{at.isoformat()}Z,note {i}")
PY
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$BIN/trendy-server" --port "$PORT" --db "$WORK/server.sqlite" --api-burst 100000 --api-rate 10000 \
    > "$WORK/server.log" 2>&1 &
SERVER=$!
sleep 2
export TRENDY_API_URL="http://127.0.0.1:$PORT"
login() { echo 'killed-download-pass-1' | "$BIN/trendy" "$1" --email kd@example.com --password-stdin --data-dir "$2" > /dev/null; }
login signup "$WORK/a"
"$BIN/trendy" import "$WORK/events.csv" --data-dir "$WORK/a" | tail -1
"$BIN/trendy" sync --data-dir "$WORK/a" > /dev/null 2>&1
count() { python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('SELECT COUNT(*) FROM local_events').fetchone()[0])" "$1/trendy.sqlite"; }
timed() { /usr/bin/time -f "$1: %e s wall, %U s user, %S s system" "$BIN/trendy" sync --data-dir "$2" 2>&1 | grep -E "^Sync [a-z_]+:|wall" | tr '\n' ' '; echo; }
login login "$WORK/b"
"$BIN/trendy" sync --data-dir "$WORK/b" > /dev/null 2>&1 &
TRY=$!
sleep "$KILL_AT"
kill -9 "$TRY"; wait "$TRY" 2>/dev/null || true
echo "killed after $KILL_AT s with $(count "$WORK/b") events stored"
timed "the next try" "$WORK/b"
echo "the device that was killed holds $(count "$WORK/b") events"
login login "$WORK/c"
timed "a whole download (baseline)" "$WORK/c"
echo "the baseline device holds $(count "$WORK/c") events"
