#!/usr/bin/env bash
# Installs the Debian packages of the named groups, if missing:
#   tools/install-deps.sh build fuzz     (no group: every group)
# Each make target asks only for the groups it needs (deps-<group>), so a
# build never installs the tools of the model check, fuzzers or hosts tests.
set -euo pipefail
declare -A groups=(
  [build]="build-essential cmake pkg-config libxxhash-dev libopenmpi-dev
           openmpi-bin mpich libmpich-dev python3 python3-venv python3-dev"
  [model]="spin build-essential"             # make test-model: spin, cc for its verifiers
  [fuzz]="clang libclang-rt-14-dev llvm"     # make test-fuzz: clang's libFuzzer
  [hosts]="iproute2 util-linux"              # make test-hosts: ip netns, unshare
  [smpi]="libsimgrid-dev"                     # make test-smpi, bench-scale: smpicc, smpirun
  [poet]="r-base-dev r-cran-rcpp r-cran-rinside libeigen3-dev"  # make test-poet: POET 0.4
)
[ $# -gt 0 ] || set -- "${!groups[@]}"
pkgs=()
for g in "$@"; do
  [ -n "${groups[$g]:-}" ] || { echo "install-deps.sh: no group '$g' (${!groups[*]})" >&2; exit 2; }
  pkgs+=(${groups[$g]})
done
missing=()
for p in $(printf '%s\n' "${pkgs[@]}" | sort -u); do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "rmadht needs these Debian packages: ${missing[*]}" >&2
  echo "install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
