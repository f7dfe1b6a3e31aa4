#!/usr/bin/env bash
# Emulated hosts for testing rmadht between machines on one machine.
#
#   hosts.sh up [N]            N hosts h1..hN (default 2), each a network
#                              namespace on one virtual switch, 10.250.0.K
#   hosts.sh down              remove them; safe to rerun, also after a crash
#   hosts.sh can               exit 0 if this machine can make them (root,
#                              network namespaces), else say why and exit 1
#   hosts.sh exec HOST CMD...  run CMD "logged in" on HOST
#   hosts.sh run MPI PPN SECONDS PROGRAM ARGS...
#                              PROGRAM on PPN ranks per host (openmpi|mpich),
#                              launched from h1, killed after SECONDS
#
# A host is a network namespace plus, per command, a UTS namespace (its own
# hostname), a private /dev/shm and its own boot id: Open MPI and MPICH call
# two processes "on one node" when hostname or boot id match, and would then
# use shared memory between them.  The only link is TCP over the switch;
# no address leaves the namespaces.
#
# RMADHT_HOSTS_SET names a set of hosts (default "rmadht"), so that two
# test runs on one machine can each have their own h1, h2, ...
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
set_name=${RMADHT_HOSTS_SET:-rmadht}
state=/run/$set_name-hosts
sw=$set_name-sw

ns() { echo "$set_name-$1"; }

# up and down refuse while a test run (test.sh) holds the set's lock, so
# that nobody tears down the hosts under it.
guard() {
  [ -n "${RMADHT_HOSTS_HOLDER:-}" ] && return
  exec 8> "/run/$set_name-hosts.lock"
  flock -n 8 || { echo "hosts.sh: a test run is using the hosts of set" \
    "$set_name; use RMADHT_HOSTS_SET=another-name" >&2; exit 1; }
}
hosts() { cat "$state/hosts" 2>/dev/null || true; }

down() {
  for h in $(hosts) h1 h2; do
    local n; n=$(ns "$h")
    if ip netns list 2>/dev/null | grep -qw "$n"; then
      for p in $(ip netns pids "$n"); do kill -9 "$p" 2>/dev/null || true; done
      ip netns del "$n"
    fi
    rm -rf "/etc/netns/$n"
  done
  ip netns list 2>/dev/null | grep -qw "$sw" && ip netns del "$sw"
  rm -rf "$state"
}

can() {
  if [ "$(id -u)" -ne 0 ]; then echo "emulated hosts need root (network namespaces)"; return 1; fi
  if ! command -v ip > /dev/null || ! command -v unshare > /dev/null; then
    echo "emulated hosts need ip (iproute2) and unshare (util-linux)"; return 1
  fi
  if ! ip netns add "$set_name-probe" 2> /dev/null; then
    echo "this machine cannot create network namespaces"; return 1
  fi
  ip netns del "$set_name-probe"
}

up() {
  local n=${1:-2}
  down
  can > /dev/null || { can; exit 1; }
  mkdir -p "$state"
  ip netns add "$sw"
  ip -n "$sw" link add br0 type bridge
  ip -n "$sw" link set br0 up
  local names=() etc_hosts="127.0.0.1 localhost"$'\n'
  for k in $(seq 1 "$n"); do
    names+=("h$k")
    etc_hosts+="10.250.0.$k h$k"$'\n'
  done
  for k in $(seq 1 "$n"); do
    local h=h$k; local hn; hn=$(ns "$h")
    ip netns add "$hn"
    ip -n "$hn" link add mh0 type veth peer name "p$k" netns "$sw"
    ip -n "$sw" link set "p$k" master br0 up
    ip -n "$hn" addr add "10.250.0.$k/24" dev mh0
    ip -n "$hn" link set lo up
    ip -n "$hn" link set mh0 up
    ip netns exec "$hn" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
      net.ipv6.conf.default.disable_ipv6=1
    mkdir -p "/etc/netns/$hn"
    printf '%s' "$etc_hosts" > "/etc/netns/$hn/hosts"
    cat /proc/sys/kernel/random/uuid > "$state/boot_id-$h"
  done
  echo "${names[*]}" > "$state/hosts"
  # A veth reports carrier a moment after both ends are up.  A launch
  # before that fails inside MPI_Init: MPICH's UCX calls the device
  # unavailable and every peer "unreachable".
  for h in "${names[@]}"; do
    local i
    for i in $(seq 100); do
      [ "$(ip netns exec "$(ns "$h")" cat /sys/class/net/mh0/operstate)" = up ] && break
      sleep 0.1
    done
    [ "$i" -lt 100 ] || { echo "hosts.sh: $h's link did not come up" >&2; exit 1; }
  done
}

host_exec() {
  local h=$1; shift
  [ -f "$state/boot_id-$h" ] || { echo "hosts.sh: no host $h (hosts.sh up?)" >&2; exit 1; }
  exec ip netns exec "$(ns "$h")" unshare --uts -- sh -c '
    hostname "$1"
    mount -t tmpfs -o size=4g tmpfs /dev/shm
    mount --bind "$2" /proc/sys/kernel/random/boot_id
    shift 2; exec "$@"' sh "$h" "$state/boot_id-$h" "$@"
}

run() {
  local mpi=$1 ppn=$2 secs=$3; shift 3
  local hs=() spec="" k
  read -r -a hs <<< "$(hosts)"
  [ ${#hs[@]} -gt 0 ] || { echo "hosts.sh: no hosts (hosts.sh up?)" >&2; exit 1; }
  for k in "${hs[@]}"; do spec+="${spec:+,}$k:$ppn"; done
  local np=$(( ppn * ${#hs[@]} ))
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  case $mpi in
    openmpi)
      exec timeout -k 5 "$secs" "$here/hosts.sh" exec h1 mpiexec.openmpi \
        --host "$spec" -n "$np" --map-by slot --bind-to none \
        --mca plm_rsh_agent "$here/rsh" \
        --mca btl tcp,self,vader --mca btl_tcp_if_include mh0 \
        --mca oob_tcp_if_include mh0 --mca btl_vader_single_copy_mechanism none \
        ${RMADHT_HOSTS_OMPI_ARGS:-} "$@" ;;
    mpich)
      exec timeout -k 5 "$secs" "$here/hosts.sh" exec h1 mpiexec.mpich \
        -launcher ssh -launcher-exec "$here/rsh" -hosts "$spec" -n "$np" \
        -iface mh0 -genv UCX_NET_DEVICES mh0 ${RMADHT_HOSTS_MPICH_ARGS:-} "$@" ;;
    *) echo "hosts.sh run: MPI is openmpi or mpich" >&2; exit 2 ;;
  esac
}

cmd=${1:-}; shift || true
case $cmd in
  up) guard; up "$@" ;;
  down) guard; down ;;
  can) can ;;
  exec) host_exec "$@" ;;
  run) run "$@" ;;
  *) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
