#!/usr/bin/env python3
"""What each per-row trigger on local_events costs a pulled event (CPU µs an event).

Usage:
    trendy types add Coffee --data-dir /tmp/tc --api-url http://127.0.0.1:9   # makes the schema
    python3 Tools/bench/trigger-cost.py /tmp/tc/trendy.sqlite [events]

Copies the database for each variant, keeps only the named triggers (or the insights insert
trigger's statements one at a time), and inserts the events as EventRowWriter does: INSERT OR
REPLACE in transactions of 500. Compare variants within one run: the machine is noisy.
"""
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid

src = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 10_000
con = sqlite3.connect(src)
type_id = con.execute("SELECT id FROM local_event_types LIMIT 1").fetchone()[0]
insert_sql = con.execute("SELECT sql FROM sqlite_master WHERE name = 'insight_events_insert'").fetchone()[0]
triggers = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'local_events'")]
con.close()
statements = [s.strip() + ";" for s in insert_sql.split("BEGIN", 1)[1].rsplit("END", 1)[0].split(";") if s.strip()]


def body(i):
    return json.dumps({
        "id": str(uuid.UUID(int=i)), "event_type_id": type_id,
        "timestamp": "2026-%02d-%02dT10:%02d:00.000Z" % (1 + i % 12, 1 + i % 28, i % 60),
        "notes": "walked the dog and had coffee %d" % i, "is_all_day": False, "source_type": "manual",
        "properties": {"mood": {"type": "number", "value": i % 5}},
        "created_at": "2026-01-01T00:00:00.000Z", "updated_at": "2026-01-01T00:00:00.000Z"}, separators=(",", ":"))


rows = [(str(uuid.UUID(int=i)), type_id, 1767261600000 + i * 60000, "manual", body(i)) for i in range(n)]
work = tempfile.mkdtemp(prefix="trigger-cost-")


def run(label, keep=(), extra=()):
    path = os.path.join(work, "t.sqlite")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    shutil.copy(src, path)
    c = sqlite3.connect(path, isolation_level=None)
    for t in triggers:
        if t not in keep:
            c.execute("DROP TRIGGER " + t)
    if extra:
        c.execute("CREATE TRIGGER probe AFTER INSERT ON local_events BEGIN\n" + "\n".join(extra) + "\nEND")
    start = time.process_time()
    for p in range(0, n, 500):
        c.execute("BEGIN")
        c.executemany(
            "INSERT OR REPLACE INTO local_events (id, event_type_id, timestamp_ms, source_type, body, sync_status)"
            " VALUES (?, ?, ?, ?, ?, 'synced')", rows[p:p + 500])
        c.execute("COMMIT")
    print("%-44s %7.1f µs an event" % (label, (time.process_time() - start) / n * 1e6), flush=True)
    c.close()


for _ in range(2):
    run("no triggers")
    run("insights insert: the daily count", extra=statements[:1])
    run("insights insert: the weekday-hour slot", extra=statements[1:2])
    run("insights insert: the numeric values", extra=statements[2:3])
    run("every insights trigger", keep=[t for t in triggers if t.startswith("insight_")])
    run("every trigger (search row by row)", keep=triggers)
shutil.rmtree(work)
