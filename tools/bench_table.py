"""Prints rmadht-bench JSON lines as one markdown table per input file."""
import json
import sys

COLUMNS = ("mode", "distribution", "phase", "batch", "mops",
           "round_trips_per_op", "hit_rate", "evictions", "checksum_retries")

for path in sys.argv[1:]:
    print(f"\n{path}\n")
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            print("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
