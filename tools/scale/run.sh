#!/usr/bin/env bash
# run.sh BUILD OUT RANKS...: rmadht-bench (and, if BUILD/reference exists,
# the reference's driver) simulated by SMPI on fat trees of RANKS hosts,
# one rank per host, InfiniBand-like and Ethernet-like (fat_tree.py).
# Appends one JSON line per phase to OUT/scale.jsonl, each with the
# profile, the link latency, the simulation's wall clock and peak memory.
#
# First the calibration: rmadht-rma-cost on two hosts on different leaves
# with 1 us links; the link latency is then scaled so that a single
# 64-byte get and flush takes the profile's round trip: 2 us (InfiniBand-
# like) and 30 us (Ethernet-like; between this machine's emulated hosts,
# rmadht-rma-cost measures 26-35 us for a single get).
#
# Environment: SCALE_PROFILES (ib eth), SCALE_MODES (lockfree fine coarse),
# SCALE_BATCHES (1 128), SCALE_DISTS (all), SCALE_ARGS (the workload, per
# rank), SCALE_TIMEOUT (seconds per run, 1800), SCALE_REFERENCE (nolock:
# the reference's variants to run), SCALE_WTIME (simulated seconds per
# MPI_Wtime, 1e-7).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 out=$2; shift 2
wtime=${SCALE_WTIME:-1e-7}
[[ $wtime =~ ^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$ ]] ||
  { echo "run.sh: SCALE_WTIME must be seconds, such as 1e-6, not '$wtime'" >&2; exit 2; }
mkdir -p "$out"
profiles=${SCALE_PROFILES:-ib eth}
modes=${SCALE_MODES:-lockfree fine coarse}
batches=${SCALE_BATCHES:-1 128}
dists=${SCALE_DISTS:-all}
read -r -a args <<< "${SCALE_ARGS:---write-ops 256 --mixed-ops 256 --contended-ops 32 --keys 16384 --mb-per-rank 1}"
limit=${SCALE_TIMEOUT:-1800}
# SMPI's own models, not its calibration for a particular Ethernet: link
# latency and bandwidth as the platform says (factors 1); no benchmarking
# of the ranks' computation, so that runs are deterministic and the load
# of this machine does not enter; an MPI_Iprobe costs nothing and an
# MPI_Wtime 0.1 us (by default a probe costs 100 us and then more for each
# further unsuccessful one, which rmadht's backoff, polling MPI_Iprobe
# until MPI_Wtime moves, would pay on every turn).  Each of those turns is
# two simulator events, so where hundreds of ranks back off at once (the
# fine mode with Zipf keys) SCALE_WTIME=1e-6 simulates a tenth of them:
# 256 ranks, fine locks, Zipf keys, 8 operations a phase took 22 s of
# wall clock instead of 70 (docs/benchmarks/scale.md compares the
# figures).  MPICH's choice of collective algorithms: with SMPI 3.32's
# default one, MPI_Win_allocate alone takes 0.2 s of wall clock at 64
# ranks, 3.8 s at 128 and 31 s at 256 (a program that only creates a
# window), cubic in the ranks; with MPICH's, 0.26 s at 256.
sg=(--cfg=smpi/simulate-computation:no --cfg=smpi/lat-factor:0:1
    --cfg=smpi/bw-factor:0:1 --cfg=smpi/iprobe:0 --cfg=smpi/wtime:$wtime
    --cfg=smpi/coll-selector:mpich
    --log=root.thres:warning --log=smpi_mpi.thres:error)
declare -A rtt_ns=([ib]=2000 [eth]=30000)
cal=$out/calibration.json
plat=$out/platforms
mkdir -p "$plat"

simulate() { # simulate JSONL_TAG PLATFORM NP PROGRAM ARGS...
  local tag=$1 p=$2 np=$3; shift 3
  local log; log=$(mktemp)
  local t0=$SECONDS
  /usr/bin/time -f "%M" -o "$log.mem" timeout "$limit" smpirun -np "$np" -platform "$p" \
    -hostfile "$p.hosts" "${sg[@]}" "$@" > "$log" 2> "$log.err"
  local rc=$? mem; mem=$(tail -1 "$log.mem" 2>/dev/null || echo 0)
  sed -n "s/^{/{$tag, \"wall_seconds\": $((SECONDS - t0)), \"peak_kb\": ${mem:-0}, /p" \
    "$log" >> "$out/scale.jsonl"
  printf '%-60s %3d phases  %5ds  %7d MB  rc %d\n' "$(basename "$1") ${*:2:7}" \
    "$(grep -c '^{' "$log")" $((SECONDS - t0)) $(( ${mem:-0} / 1024 )) "$rc"
  [ $rc -eq 0 ] || grep -v '^\[' "$log.err" | tail -3 | sed 's/^/    /'
  rm -f "$log" "$log.err" "$log.mem"
  return $rc
}

failed=0
for prof in $profiles; do
  if ! lat=$(python3 -c "import json,sys; print(json.load(open('$cal'))['$prof'])" 2>/dev/null); then
    python3 "$here/fat_tree.py" "$prof" 2 1 "$plat/cal-$prof.xml"
    ns=$(smpirun -np 2 -platform "$plat/cal-$prof.xml" -hostfile "$plat/cal-$prof.xml.hosts" \
           "${sg[@]}" "$build/rmadht-rma-cost" --mb 8 --seconds 0.001 2> /dev/null |
         python3 -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d["pattern"] == "single" and d["block_bytes"] == 64: print(d["ns_per_block"])')
    lat=$(python3 -c "print(round(${rtt_ns[$prof]} / $ns, 4))")
    python3 - "$cal" "$prof" "$lat" "$ns" <<'PY'
import json, os, sys
path, prof, lat, ns = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
d = json.load(open(path)) if os.path.exists(path) else {}
d[prof] = lat
d[prof + "_single_get_ns_at_1us"] = ns
json.dump(d, open(path, "w"), indent=1)
PY
    echo "calibration $prof: single get $ns ns with 1 us links; links of $lat us"
  fi
  for np in "$@"; do
    p=$plat/$prof-$np.xml
    python3 "$here/fat_tree.py" "$prof" "$np" "$lat" "$p"
    tag="\"implementation\": \"rmadht\", \"profile\": \"$prof\", \"link_latency_us\": $lat"
    for v in ${SCALE_REFERENCE:-nolock}; do
      drv=$build/reference/rmadht-reference-driver-$v
      [ -x "$drv" ] || continue
      name=$v; [ "$v" = nolock ] && name=lockfree
      # The driver's N writes then N reads, uniform, as rmadht-bench's.
      simulate "\"profile\": \"$prof\", \"link_latency_us\": $lat" "$p" "$np" \
        "$drv" "$name" "${args[1]}" 1 || failed=$((failed + 1))
    done
    for mode in $modes; do
      for batch in $batches; do
        simulate "$tag" "$p" "$np" "$build/rmadht-bench" --rma --mode "$mode" \
          --dist "$dists" --batch "$batch" "${args[@]}" || failed=$((failed + 1))
      done
    done
  done
done
[ $failed -eq 0 ] || { echo "run.sh: $failed runs failed" >&2; exit 1; }
