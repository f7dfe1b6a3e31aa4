#!/usr/bin/env bash
# Installs the Debian packages POET 0.4 builds with (R, Rcpp, RInside,
# Eigen), if missing; only the POET test (tools/poet/test.sh) needs them.
set -euo pipefail
pkgs=(r-base-dev r-cran-rcpp r-cran-rinside libeigen3-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "POET needs these Debian packages: ${missing[*]}" >&2
  echo "install them as root: apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
