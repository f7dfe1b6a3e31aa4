#!/usr/bin/env python3
"""table.py SCALE.JSONL [--plot PNG]: the simulated runs (run.sh) as a
table of per-rank throughput (thousand operations per second per rank)
against ranks, one row per implementation, profile, mode, batch (and
write queue, if any), distribution and phase; then the simulations' wall
clock and peak memory, the simulated time of rmadht_create, and the
heap it takes per rank beside what the MPI objects it makes take when
made bare, per rank count.
--plot draws per-rank throughput of reads and writes against ranks
(matplotlib).

table.py --report REPORT.md --plot PNG draws the plot from the figures of
a report's table as table.py printed it (docs/benchmarks/scale.md), whose
cells come from several runs."""
import collections
import json
import sys


# The first table's leading columns, before one per rank count.
KEY_COLUMNS = ["impl", "net", "mode", "batch", "keys", "phase"]


def batch(r):
    """The batch size, and the write queue where there is one."""
    q = r.get("write_queue", 0)
    return f"{r['batch']}, queue {q}" if q else str(r["batch"])


def most(rows, n, field, scale, fmt):
    """The largest value of field at n ranks, scaled; older runs' lines
    lack the create fields."""
    got = [r[field] for r in rows if r["ranks"] == n and r.get(field) is not None]
    return format(max(got) * scale, fmt) if got else "-"


def report_rows(path):
    """The rows of the table in a report that the first table printed below
    heads, per-rank figures turned back into Mops/s; a cell's marks after
    its figure are dropped, "-" skipped."""
    rows, ranks = [], None
    for line in open(path, encoding="utf-8"):
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if cols[:len(KEY_COLUMNS)] == KEY_COLUMNS:
            ranks = [int(c.split()[0]) for c in cols[len(KEY_COLUMNS):]]
        elif ranks and line.startswith("|---"):
            continue
        elif ranks and line.startswith("|"):
            impl, net, mode, b, keys, phase = cols[:len(KEY_COLUMNS)]
            size, _, queue = b.partition(", queue ")
            for n, cell in zip(ranks, cols[len(KEY_COLUMNS):]):
                if cell.split()[0] != "-":
                    rows.append({"implementation": impl, "profile": net, "mode": mode,
                                 "batch": int(size.split()[0]),
                                 "write_queue": int(queue.split()[0]) if queue else 0,
                                 "distribution": keys, "phase": phase, "ranks": n,
                                 "mops": float(cell.split()[0]) * n / 1e3})
        elif ranks:
            break
    return rows


def main():
    png = sys.argv[sys.argv.index("--plot") + 1] if "--plot" in sys.argv else None
    if "--report" in sys.argv:
        if png is None:
            sys.exit("table.py: --report draws a plot only; give --plot PNG")
        plot(report_rows(sys.argv[sys.argv.index("--report") + 1]), png)
        return
    path = sys.argv[1]
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    ranks = sorted({r["ranks"] for r in rows})
    cell = collections.OrderedDict()
    for r in rows:
        key = (r.get("implementation", "rmadht"), r["profile"], r["mode"], batch(r),
               r["distribution"], r["phase"])
        kops = r["mops"] * 1e3 / r["ranks"]
        mark = "" if r.get("ok", True) else " LOST"
        cell.setdefault(key, {})[r["ranks"]] = f"{kops:.1f}{mark}"
    head = KEY_COLUMNS + [f"{n} ranks" for n in ranks]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, by in cell.items():
        print("| " + " | ".join(str(k) for k in key) + " | "
              + " | ".join(by.get(n, "-") for n in ranks) + " |")
    print()
    print("| ranks | runs | wall clock per run (s), max | peak memory (MB), max "
          "| rmadht_create, simulated (ms), max | its heap per rank (KB), max "
          "| MPI's part, made bare (KB), max |")
    print("|---|---|---|---|---|---|---|")
    for n in ranks:
        runs = {(r.get("implementation", "rmadht"), r["profile"], r["mode"], batch(r)): r
                for r in rows if r["ranks"] == n}
        print(f"| {n} | {len(runs)} | {max(r['wall_seconds'] for r in runs.values())} | "
              f"{max(r['peak_kb'] for r in runs.values()) // 1024} | "
              f"{most(rows, n, 'create_seconds', 1e3, '.2f')} | "
              f"{most(rows, n, 'create_bytes', 1 / 1024, '.0f')} | "
              f"{most(rows, n, 'mpi_bytes', 1 / 1024, '.0f')} |")
    if png:
        plot(rows, png)


def plot(rows, png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    # Colour: the table and how it is called; line: the phase; marker: the
    # network profile.
    series = collections.defaultdict(dict)
    for r in rows:
        if r["phase"] in ("read", "write") and r["mode"] == "lockfree" \
                and r["distribution"] == "uniform":
            s = (r.get("implementation", "rmadht"), batch(r), r["phase"], r["profile"])
            series[s][r["ranks"]] = r["mops"] * 1e3 / r["ranks"]
    colours = {}
    palette = ["black", "tab:blue", "tab:green", "tab:red", "tab:purple", "tab:orange"]
    fig, ax = plt.subplots(figsize=(10, 6))
    for (impl, b, phase, prof), by in sorted(series.items()):
        c = colours.setdefault((impl, b), palette[len(colours) % len(palette)])
        x = sorted(by)
        ax.plot(x, [by[n] for n in x], color=c, marker="o" if prof == "ib" else "s",
                linestyle="-" if phase == "read" else "--",
                label=f"{impl}, batch {b}: {phase}, {prof}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(sorted({n for by in series.values() for n in by}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("ranks (one per host, simulated)")
    ax.set_ylabel("thousand operations / s per rank")
    ax.set_title("lock-free, uniform keys, SMPI fat trees (ib: 2 us, eth: 30 us round trip); "
                 "reads solid, writes dashed", fontsize=9)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.tight_layout()
    fig.savefig(png, dpi=100)


main()
