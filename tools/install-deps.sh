#!/usr/bin/env bash
# Installs the Debian packages rmadht builds and tests with, if missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libxxhash-dev
      libopenmpi-dev openmpi-bin mpich libmpich-dev
      python3 python3-venv python3-dev spin
      clang libclang-rt-14-dev llvm  # make test-fuzz: clang's libFuzzer
      iproute2 util-linux            # make test-hosts: ip netns, unshare
      libsimgrid-dev)                # make test-smpi, bench-scale: smpicc, smpirun
missing=()
for p in "${pkgs[@]}"; do
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
