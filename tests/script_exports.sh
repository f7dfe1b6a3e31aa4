#!/usr/bin/env bash
# Each library, shared and static, makes global exactly the functions its
# installed headers declare, nothing else (no internal function, no
# variable): librmadht the RMADHT_API declarations of include/*.h;
# librmadht_poet the DHT_* calls of POET's current API (rmadht/poet/DHT.h)
# and the prefixed names the 2021 dialect's header maps its DHT_* calls to
# (rmadht_poet.h).  The shared libraries' boundary is hidden visibility; the
# archives' is cmake/localize.cmake.
set -euo pipefail
src=$1 build=$2

symbols() { # type and name of each global symbol the library defines
  case $1 in
    *.so) nm -D --defined-only "$1" ;;
    *.a) nm -g --defined-only "$1" ;;
  esac | awk 'NF == 3 {print $2, $3}'
}

check() { # library, the names its headers declare
  local lib=$1 declared=$2 exported
  exported=$(symbols "$lib" | awk '{print $2}' | sort)
  if [ "$exported" != "$declared" ]; then
    echo "$lib: global but not declared:"; comm -23 <(echo "$exported") <(echo "$declared")
    echo "$lib: declared but not global:"; comm -13 <(echo "$exported") <(echo "$declared")
    exit 1
  fi
  if symbols "$lib" | awk '$1 != "T"' | grep -q .; then
    echo "$lib: global data:"; symbols "$lib" | awk '$1 != "T"'
    exit 1
  fi
  echo "$(basename "$lib"): $(echo "$exported" | wc -l) symbols, each declared in include/"
}

core=$(grep -ho '^RMADHT_API [^(]*(' "$src"/include/*.h |
  sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | sort -u)
poet=$( (
  grep -ho '^[A-Za-z ]*[ *]DHT_[A-Za-z_]*(' "$src"/include/rmadht/poet/DHT.h |
    sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/'
  awk '$1 == "#define" && $2 ~ /^DHT_/ && $3 ~ /^rmadht_/ {print $3}' \
    "$src"/include/rmadht_poet.h) | sort -u)
# librmadht_mpidht: the names MPI-DHT's header (LUCX/MPI/DHT.h) declares;
# neither librmadht nor librmadht_poet carries them for it (the core's list
# above has no DHT_ name, the POET library's is its own headers').
mpidht=$(grep -ho '^[A-Za-z ]*[ *]DHT_[A-Za-z_]*(' \
    "$src"/include/rmadht/mpidht/LUCX/MPI/DHT.h |
  sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | sort -u)
for ext in so a; do
  check "$build/librmadht.$ext" "$core"
  check "$build/src/poet/librmadht_poet.$ext" "$poet"
  check "$build/src/mpidht/librmadht_mpidht.$ext" "$mpidht"
done
