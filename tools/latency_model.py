"""A latency model of the benchmark between hosts (tools/hosts/bench.sh).

    python3 tools/latency_model.py [DIR]      (default bench-results/hosts)

Per operation, on one rank:

    time = cpu + remote * (round_trips * L + messages * g + blocks * b
                           + bytes / BW)

cpu is the time per operation of the same run on one node (2 ranks, RMA
through shared memory: the software cost of the table and of MPI's calls,
without a network); round_trips are the completions the rank waits for
(flushes, unlocks, and a lock counted as one); messages the gets, puts and
atomics; blocks the further contiguous blocks of gets and puts that move
several with one derived datatype (rmadht's gathered gets and puts; 0 for
plain ones); bytes what they carry; remote the share of them that leaves
the host.  L, g, b and BW of the test bed come from rmadht-rma-cost
between the hosts: a pipelined get of n bytes costs g + n / BW (fitted at
64 and 1664 bytes), a single one L more (at 256 bytes), and each block of
an indexed get of 64 blocks of 1664 bytes b + 1664 / BW.  The model is checked against
the measured speed between the two test hosts (remote = the measured
share, about 1/2), then projected to many hosts (remote = 1) with
L = 2 us (InfiniBand-class: g and b 0.3 us, a block taken as dear as a
message since MPI libraries read a derived datatype block by block over
RDMA, 10 GB/s) and L = 30 us (Ethernet-class: the test bed's g and b,
1.25 GB/s).  It assumes round trips do
not overlap (a batch's flushes to different targets in fact partly do),
that the target needs no CPU of its own (true of RDMA; over TCP the
target's MPI must be scheduled, which the test bed's L includes), and no
contention beyond what the measured runs had.

Reads rmadht's JSON lines (MPI.jsonl, MPI-one-node.jsonl, MPI-rma-cost.jsonl)
and, when present, the reference's (reference-MPI.jsonl,
reference-MPI-one-node.jsonl), and prints one markdown table per MPI.
"""
import json
import os
import sys

# name, L, g and b (None: the test bed's), BW in bytes per microsecond.
CLASSES = (("IB-class", 2.0, 0.3, 10e3), ("Ethernet-class", 30.0, None, 1.25e3))
PHASES = ("write", "read")


def rows(path):
    """The JSON objects of a file, [] if it is missing."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def key(row):
    return (row.get("implementation", "rmadht"), row["mode"], row["batch"],
            row.get("write_queue", 0), row["phase"])


def testbed(cost):
    """L, g, b (microseconds) and BW (bytes per microsecond) of the test
    bed."""
    ns = {(r["pattern"], r["block_bytes"]): r["ns_per_block"] / 1e3
          for r in cost}
    p_small, p_big = ns[("pipelined", 64)], ns[("pipelined", 1664)]
    # A busy machine can make the larger get look no dearer: then the
    # bytes are taken as free and g as the smaller get's cost.
    bw = 1600 / (p_big - p_small) if p_big > p_small else float("inf")
    g = p_small - 64 / bw
    latency = ns[("single", 256)] - ns[("pipelined", 256)]
    block = max(ns.get(("indexed", 1664), 0) - 1600 / bw - 64 / bw, 0)
    return latency, g, block, bw


def traffic(row):
    """Round trips, messages, further blocks and bytes per operation."""
    trips = row["syncs_per_op"] + row["locks_per_op"]
    messages = row["gets_per_op"] + row["puts_per_op"] + row["atomics_per_op"]
    transfers = row["gets_per_op"] + row["puts_per_op"]
    blocks = max(row.get("blocks_per_op", transfers) - transfers, 0)
    data = (row["bytes_got_per_op"] + row["bytes_put_per_op"]
            + row.get("bytes_atomic_per_op", 0))
    return trips, messages, blocks, data


def network(row, latency, g, block, bw, remote):
    """Microseconds per operation spent on the network."""
    trips, messages, blocks, data = traffic(row)
    return remote * (trips * latency + messages * g + blocks * block
                     + data / bw)


def us_per_op(row):
    """Microseconds per operation on one rank, from a measured row."""
    return row["seconds"] * row["ranks"] / row["ops"] * 1e6


def main():
    where = sys.argv[1] if len(sys.argv) > 1 else "bench-results/hosts"
    for mpi in ("openmpi", "mpich"):
        cost = rows(f"{where}/{mpi}-rma-cost.jsonl")
        measured = rows(f"{where}/{mpi}.jsonl") + rows(
            f"{where}/reference-{mpi}.jsonl")
        one_node = {key(r): r for r in rows(f"{where}/{mpi}-one-node.jsonl")
                    + rows(f"{where}/reference-{mpi}-one-node.jsonl")}
        if not cost or not measured:
            continue
        latency, g, block, bw = testbed(cost)
        print(f"\n{mpi}: test bed L = {latency:.1f} us, g = {g:.2f} us, "
              f"b = {block:.2f} us, BW = {bw / 1e3:.2f} GB/s "
              f"(rmadht-rma-cost between hosts)\n")
        head = ["implementation", "mode", "batch", "write queue", "phase",
                "round trips", "messages", "further blocks", "KB",
                "cpu us (1 node)", "measured Mops/s", "model Mops/s"]
        for name, lat, _, _ in CLASSES:
            head.append(f"{name} {lat:g} us: us/op, Mops/s per rank")
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in measured:
            if row["phase"] not in PHASES or row.get("ranks_per_host", 1) != 1:
                continue
            local = one_node.get(key(row))
            if not local:
                continue
            ranks = row["ranks"]
            cpu = us_per_op(local)
            share = row["remote_share"] or 0
            model = cpu + network(row, latency, g, block, bw, share)
            trips, messages, blocks, data = traffic(row)
            cells = [row.get("implementation", "rmadht"), row["mode"],
                     str(row["batch"]), str(row.get("write_queue", 0)),
                     row["phase"], f"{trips:.3f}", f"{messages:.3f}",
                     f"{blocks:.2f}", f"{data / 1e3:.2f}", f"{cpu:.2f}",
                     f"{ranks / us_per_op(row):.3f}", f"{ranks / model:.3f}"]
            for _, lat, gap, width in CLASSES:
                t = cpu + network(row, lat, g if gap is None else gap,
                                  block if gap is None else gap, width, 1)
                cells.append(f"{t:.1f}, {1 / t:.3f}")
            print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
