#!/usr/bin/env bash
# Each shared library exports exactly the functions its installed headers
# declare, nothing else (no internal function, no variable): librmadht the
# RMADHT_API declarations of include/*.h; librmadht_poet the DHT_* calls of
# POET's current API (rmadht/poet/DHT.h) and the prefixed names the 2021
# dialect's header maps its DHT_* calls to (rmadht_poet.h).
set -euo pipefail
src=$1 build=$2

check() { # library, the names its headers declare
  local lib=$1 declared=$2 exported
  exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
  if [ "$exported" != "$declared" ]; then
    echo "$lib: exported but not declared:"; comm -23 <(echo "$exported") <(echo "$declared")
    echo "$lib: declared but not exported:"; comm -13 <(echo "$exported") <(echo "$declared")
    exit 1
  fi
  if nm -D --defined-only "$lib" | awk '$2 !~ /^[T]$/' | grep -q .; then
    echo "$lib: exported data:"; nm -D --defined-only "$lib" | awk '$2 !~ /^[T]$/'
    exit 1
  fi
  echo "$(basename "$lib"): $(echo "$exported" | wc -l) symbols, each declared in include/"
}

check "$build/librmadht.so" "$(grep -ho '^RMADHT_API [^(]*(' "$src"/include/*.h |
  sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | sort -u)"
check "$build/src/poet/librmadht_poet.so" "$( (
  grep -ho '^[A-Za-z ]*[ *]DHT_[A-Za-z_]*(' "$src"/include/rmadht/poet/DHT.h |
    sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/'
  awk '$1 == "#define" && $2 ~ /^DHT_/ && $3 ~ /^rmadht_/ {print $3}' \
    "$src"/include/rmadht_poet.h) | sort -u)"

# librmadht_mpidht: the names MPI-DHT's header (LUCX/MPI/DHT.h) declares;
# neither librmadht nor librmadht_poet carries them for it (the core's list
# above has no DHT_ name, the POET library's is its own headers').
check "$build/src/mpidht/librmadht_mpidht.so" "$(
  grep -ho '^[A-Za-z ]*[ *]DHT_[A-Za-z_]*(' \
    "$src"/include/rmadht/mpidht/LUCX/MPI/DHT.h |
    sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | sort -u)"
