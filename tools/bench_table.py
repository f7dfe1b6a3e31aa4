"""Prints rmadht-bench and rmadht-rma-cost JSON lines as one markdown table
per input file, with the columns its rows carry.

--hosts: the columns of the benchmark between hosts (tools/hosts/bench.sh),
with the calls and bytes each operation moves over the window and the load
average.  --summary: one table of Mops/s (summed over ranks) per
implementation, mode and batch, a column per MPI and phase, and one of what
a read and a write move; the MPI is taken from the file name."""
import json
import os
import sys

BENCH = ("mode", "path", "distribution", "phase", "batch", "mops",
         "round_trips_per_op", "hit_rate", "evictions", "checksum_retries")
HOSTS = ("implementation", "mode", "batch", "write_queue", "ranks_per_host",
         "phase", "mops", "round_trips_per_op", "gets_per_op",
         "bytes_got_per_op", "puts_per_op", "bytes_put_per_op",
         "atomics_per_op", "locks_per_op", "remote_share", "load_average")
MPIS = ("openmpi", "mpich")
PHASES = ("write", "read", "mixed", "cache")


def load(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    for row in rows:
        row.setdefault("implementation", "rmadht")
    return rows


def table(head, body):
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cells in body:
        print("| " + " | ".join(cells) + " |")


def summary(paths):
    """Speed and traffic between hosts, every file's rows side by side."""
    speed, traffic, order = {}, {}, []
    for path in paths:
        name = os.path.basename(path)
        mpi = next((m for m in MPIS if m in name), "?")
        for row in load(path):
            if "mops" not in row or row.get("one_node"):
                continue
            what = (row["implementation"], row["mode"], row["batch"],
                    row.get("write_queue", 0), row.get("ranks_per_host", 1))
            if what not in speed:
                order.append(what)
                speed[what] = {}
            speed[what][(mpi, row["phase"])] = (
                f"{row['mops']:.3f} ({row.get('load_average', '?')})")
            if mpi == "openmpi" and row["phase"] in ("read", "write"):
                traffic[what + (row["phase"],)] = row
    print("\nMops/s summed over ranks (load average at the start of the run)\n")
    head = ["implementation", "mode", "batch", "write queue", "ranks/host"] + [
        f"{m} {p}" for m in MPIS for p in PHASES]
    table(head, ([*map(str, what)] + [
        speed[what].get((m, p), "") for m in MPIS for p in PHASES]
        for what in order))
    print("\nPer operation (Open MPI runs): round trips, gets, bytes got, "
          "puts, bytes put, atomics, bytes they carry, locks\n")
    head = ["implementation", "mode", "batch", "write queue", "ranks/host",
            "phase", "round trips", "gets", "bytes got", "puts", "bytes put",
            "atomics", "atomic bytes", "locks"]
    body = []
    for what in order:
        for phase in ("read", "write"):
            row = traffic.get(what + (phase,))
            if not row or "gets_per_op" not in row:
                continue
            body.append([*map(str, what), phase] + [
                f"{row[k]:.3g}" for k in (
                    "round_trips_per_op", "gets_per_op", "bytes_got_per_op",
                    "puts_per_op", "bytes_put_per_op", "atomics_per_op",
                    "bytes_atomic_per_op", "locks_per_op")])
    table(head, body)


def main():
    args = sys.argv[1:]
    paths = [a for a in args if not a.startswith("--")]
    if "--summary" in args:
        summary(paths)
        return
    for path in paths:
        rows = load(path)
        if not rows:
            continue
        if "mops" not in rows[0]:
            columns = tuple(k for k in rows[0] if k != "implementation")
        elif "--hosts" in args:
            columns = HOSTS
        else:
            columns = BENCH
        print(f"\n{path}\n")
        table(columns, ([str(row.get(c, "")) for c in columns] for row in rows))


if __name__ == "__main__":
    main()
