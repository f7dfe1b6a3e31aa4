#!/usr/bin/env python3
"""table.py SCALE.JSONL [--plot PNG]: the simulated runs (run.sh) as a
table of per-rank throughput (thousand operations per second per rank)
against ranks, one row per implementation, profile, mode, batch,
distribution and phase; then the simulations' wall clock and peak memory
per rank count.  --plot draws per-rank throughput of reads and writes
against ranks (R's png device, Rscript)."""
import collections
import json
import os
import subprocess
import sys
import tempfile


def main():
    path = sys.argv[1]
    png = sys.argv[sys.argv.index("--plot") + 1] if "--plot" in sys.argv else None
    rows = [json.loads(l) for l in open(path) if l.startswith("{")]
    ranks = sorted({r["ranks"] for r in rows})
    cell = collections.OrderedDict()
    for r in rows:
        key = (r.get("implementation", "rmadht"), r["profile"], r["mode"], r["batch"],
               r["distribution"], r["phase"])
        kops = r["mops"] * 1e3 / r["ranks"]
        mark = "" if r.get("ok", True) else " LOST"
        cell.setdefault(key, {})[r["ranks"]] = f"{kops:.1f}{mark}"
    head = ["impl", "net", "mode", "batch", "keys", "phase"] + [f"{n} ranks" for n in ranks]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for key, by in cell.items():
        print("| " + " | ".join(str(k) for k in key) + " | "
              + " | ".join(by.get(n, "-") for n in ranks) + " |")
    print()
    print("| ranks | runs | wall clock per run (s), max | peak memory (MB), max |")
    print("|---|---|---|---|")
    for n in ranks:
        runs = {(r.get("implementation", "rmadht"), r["profile"], r["mode"], r["batch"]): r
                for r in rows if r["ranks"] == n}
        print(f"| {n} | {len(runs)} | {max(r['wall_seconds'] for r in runs.values())} | "
              f"{max(r['peak_kb'] for r in runs.values()) // 1024} |")
    if png:
        plot(rows, png)


def plot(rows, png):
    keep = [r for r in rows if r["phase"] in ("read", "write") and r["mode"] == "lockfree"
            and r["distribution"] == "uniform"]
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write("series,ranks,kops\n")
        for r in keep:
            s = (f"{r.get('implementation', 'rmadht')} {r['profile']} {r['phase']}"
                 f" batch {r['batch']}")
            f.write(f"{s},{r['ranks']},{r['mops'] * 1e3 / r['ranks']:.3f}\n")
    script = f"""
d <- read.csv("{f.name}")
png("{png}", width = 900, height = 600)
par(mar = c(5, 5, 3, 1))
s <- unique(d$series)
cols <- rainbow(length(s))
plot(NULL, log = "xy", xlim = range(d$ranks), ylim = range(d$kops),
     xlab = "ranks (one per host, simulated)", ylab = "thousand operations / s per rank",
     main = "rmadht and the reference (MPI-DHT), lock-free, uniform keys: SMPI fat trees",
     xaxt = "n")
axis(1, at = unique(d$ranks))
for (i in seq_along(s)) {{
  x <- d[d$series == s[i], ]; x <- x[order(x$ranks), ]
  lines(x$ranks, x$kops, col = cols[i], type = "b", pch = 19, lwd = 2,
        lty = ifelse(grepl("eth", s[i]), 2, 1))
}}
legend("bottomleft", legend = s, col = cols, lwd = 2, pch = 19, cex = 0.8,
       lty = ifelse(grepl("eth", s), 2, 1))
invisible(dev.off())
"""
    subprocess.run(["Rscript", "-e", script], check=True)
    os.unlink(f.name)


main()
