#!/usr/bin/env python3
"""fat_tree.py PROFILE HOSTS LATENCY_US OUT: a SimGrid platform of HOSTS
hosts on a two-level fat tree with full bisection (m hosts per leaf
switch, HOSTS/m leaves, m spines, m the power of two nearest sqrt(HOSTS)),
and OUT.hosts, the host file for smpirun (one rank per host).

PROFILE sets the links' bandwidth: ib 100 Gb/s (InfiniBand-like), eth
10 Gb/s (Ethernet-like).  LATENCY_US is each link's latency: a path
between leaves crosses 4 links, within a leaf 2; run.sh calibrates it so
that a simulated get-and-flush to another leaf takes the profile's round
trip (2 us and 30 us)."""
import math
import sys

BANDWIDTH = {"ib": "100Gbps", "eth": "10Gbps"}


def main():
    profile, hosts, lat_us, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    per_leaf = 1 << max(0, round(math.log2(hosts) / 2))
    if hosts == 2:
        per_leaf = 1  # two leaves: the calibration's path crosses the spine
    leaves = hosts // per_leaf
    assert per_leaf * leaves == hosts, "HOSTS must be a power of two"
    topo = f"2;{per_leaf},{leaves};1,{per_leaf};1,1"
    with open(out, "w") as f:
        f.write(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <cluster id="fat-tree" prefix="host-" suffix="" radical="0-{hosts - 1}"
             speed="10Gf" bw="{BANDWIDTH[profile]}" lat="{lat_us:.6f}us"
             loopback_bw="400Gbps" loopback_lat="0.05us"
             topology="FAT_TREE" topo_parameters="{topo}"/>
  </zone>
</platform>
""")
    with open(out + ".hosts", "w") as f:
        f.writelines(f"host-{i}\n" for i in range(hosts))


main()
