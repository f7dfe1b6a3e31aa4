"""Prints rmadht-bench and rmadht-rma-cost JSON lines as one markdown table
per input file, with the columns its rows carry.  --hosts: the columns of
the benchmark between hosts (tools/hosts/bench.sh), with the calls and
bytes each operation moves over the window and the load average."""
import json
import sys

BENCH = ("mode", "path", "distribution", "phase", "batch", "mops",
         "round_trips_per_op", "hit_rate", "evictions", "checksum_retries")
HOSTS = ("implementation", "mode", "batch", "ranks_per_host", "phase", "mops",
         "round_trips_per_op", "gets_per_op", "bytes_got_per_op",
         "puts_per_op", "bytes_put_per_op", "atomics_per_op", "locks_per_op",
         "remote_share", "load_average")

args = sys.argv[1:]
hosts = "--hosts" in args
for path in (a for a in args if a != "--hosts"):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    if not rows:
        continue
    if "mops" not in rows[0]:
        columns = tuple(rows[0])
    elif hosts:
        columns = HOSTS
        for row in rows:
            row.setdefault("implementation", "rmadht")
    else:
        columns = BENCH
    print(f"\n{path}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row.get(c, "")) for c in columns) + " |")
