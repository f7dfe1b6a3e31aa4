#!/usr/bin/env bash
# The shared library exports exactly the functions the installed headers
# declare: every RMADHT_API declaration and the DHT_* calls of POET's API, nothing else
# (no internal function, no variable).
set -euo pipefail
src=$1 build=$2
lib=$(ls "$build"/librmadht.so | head -n 1)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
declared=$( (grep -ho '^RMADHT_API [^(]*(' "$src"/include/*.h
             grep -ho '^[A-Za-z ]*[ *]DHT_[A-Za-z_]*(' "$src"/include/*.h) |
           sed 's/.*[ *]\([A-Za-z_0-9]*\)($/\1/' | sort -u)
if [ "$exported" != "$declared" ]; then
  echo "exported but not declared:"; comm -23 <(echo "$exported") <(echo "$declared")
  echo "declared but not exported:"; comm -13 <(echo "$exported") <(echo "$declared")
  exit 1
fi
if nm -D --defined-only "$lib" | awk '$2 !~ /^[T]$/' | grep -q .; then
  echo "exported data:"; nm -D --defined-only "$lib" | awk '$2 !~ /^[T]$/'
  exit 1
fi
echo "exports: $(echo "$exported" | wc -l) symbols, each declared in include/"
