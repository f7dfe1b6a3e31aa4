"""Prints rmadht-bench and rmadht-rma-cost JSON lines as one markdown table
per input file, with the columns its rows carry."""
import json
import sys

BENCH = ("mode", "path", "distribution", "phase", "batch", "mops",
         "round_trips_per_op", "hit_rate", "evictions", "checksum_retries")

for path in sys.argv[1:]:
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if not rows:
        continue
    columns = BENCH if "mops" in rows[0] else tuple(rows[0])
    print(f"\n{path}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
