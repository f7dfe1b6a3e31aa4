#!/usr/bin/env bash
# Checks every variant of the slot-protocol model (slot.pml) with Spin:
# the protocol as shipped must pass (or, for the two variants whose states
# outgrow the verifier's memory, find no violation before the bound:
# "bounded"), each variant with a fix removed must fail with a
# counterexample.  Prints states explored and time per variant
# and exits non-zero if any variant does otherwise.  docs/explanation/lockfree-protocol.md says
# what each variant is and what its counterexample shows.
#   model/check.sh            every variant
#   model/check.sh NAME...    only these (names as printed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
command -v spin > /dev/null || { echo "check.sh: spin is not installed (apt-get install spin)" >&2; exit 2; }
cc=${CC:-cc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | expected | switches
# The RMA variants before rma-restore model puts whose bytes land once;
# those from rma-restore on, and the shipped ones, let a landed byte land
# again until the put completes (RESTORE).
variants=(
  "rma|pass|-DRESTORE -DFIX_WAIT -DFIX_FLUSHVER"
  "rma-fresh|pass|-DRESTORE -DFRESH -DFIX_WAIT -DFIX_FLUSHVER"
  "rma-update|pass|-DRESTORE -DUPDATE -DFIX_WAIT -DFIX_FLUSHVER"
  "rma-rewrite|bounded|-DRESTORE -DREWRITE -DFIX_WAIT -DFIX_FLUSHVER"
  "rma-guess|bounded|-DRESTORE -DFRESH -DGUESS -DFIX_WAIT -DFIX_FLUSHVER"
  "nl|pass|-DNL -DFIX_VERLAST -DFIX_WAIT"
  "nl-fresh|pass|-DNL -DFRESH -DFIX_VERLAST -DFIX_WAIT"
  "nl-update|pass|-DNL -DUPDATE -DFIX_VERLAST -DFIX_WAIT"
  "rma-before|fail|"
  "rma-open-race|fail|-DFIX_WAIT"
  "rma-diff-only|fail|-DFIX_DIFF"
  "rma-loose-wait|fail|-DFRESH -DFIX_WAIT -DFIX_DIFF -DWAIT_LOOSE"
  "rma-update-nowait|fail|-DUPDATE -DFIX_WAIT -DFIX_DIFF -DUPD_NOWAIT"
  "rma-update-loose|fail|-DUPDATE -DFIX_WAIT -DFIX_DIFF -DWAIT_LOOSE"
  "rma-restore|fail|-DRESTORE -DFIX_WAIT -DFIX_DIFF"
  "rma-restore-nowait|fail|-DRESTORE -DFIX_FLUSHVER"
  "rma-rewrite-noclaim|fail|-DRESTORE -DREWRITE -DREWRITE_NOCLAIM -DFIX_WAIT -DFIX_FLUSHVER"
  "rma-guess-any|fail|-DRESTORE -DFRESH -DGUESS -DGUESS_ANY -DFIX_WAIT -DFIX_FLUSHVER"
  "nl-no-verlast|fail|-DNL -DFIX_WAIT"
  "nl-no-wait|fail|-DNL -DFIX_VERLAST"
)
# Each failing variant again without the one-owner assertion: the race
# must also do visible damage (a torn or unfinished slot, a stale tag, a
# lost increment).
n=${#variants[@]}
for ((i = 0; i < n; i++)); do
  IFS='|' read -r name want flags <<< "${variants[$i]}"
  [ "$want" = fail ] && variants+=("$name-damage|fail|$flags -DNO_OWNER_CHECK")
done


bad=0
printf '%-26s %-7s %-7s %12s %8s  %s\n' variant expect got states seconds "first violation"
for v in "${variants[@]}"; do
  IFS='|' read -r name want flags <<< "$v"
  if [ $# -gt 0 ]; then
    keep=0
    for x in "$@"; do [ "$x" = "$name" ] && keep=1; done
    [ $keep = 1 ] || continue
  fi
  d="$work/$name"
  mkdir -p "$d"
  cp "$here/slot.pml" "$d/"
  # shellcheck disable=SC2086
  (cd "$d" && spin $flags -a slot.pml > spin.log 2>&1 &&
     $cc -O2 -w -DSAFETY -DNOFAIR -DCOLLAPSE -DMEMLIM=${MODEL_MEMLIM:-2048} \
       -o pan pan.c > cc.log 2>&1) || { echo "$name: cannot build the verifier"; cat "$d"/*.log; bad=1; continue; }
  (cd "$d" && ./pan -m200000 > pan.log 2>&1) || true
  errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$d/pan.log" | head -1)
  states=$(sed -n 's/^ *\([0-9e.+]*\) states, stored.*/\1/p' "$d/pan.log" | head -1)
  secs=$(sed -n 's/.*elapsed time \([0-9.e+]*\) seconds.*/\1/p' "$d/pan.log" | head -1)
  what=$(grep -m1 -o '^pan:1: .*' "$d/pan.log" || true)
  case "$what" in
    "") ;;
    *owners*) what="two writers own one slot" ;;
    *incs*) what="an increment was lost" ;;
    *"invalid end state"*) what="a client waits forever" ;;
    *written*) what="a read returned a value never written for its key" ;;
    *tag*) what="a slot unfinished or under a stale tag after writers stopped" ;;
    *assertion*) what="a slot torn or in flight after writers stopped" ;;
    *) what="${what#pan:1: }" ;;
  esac
  # pan says "Warning: Search not completed" when it stops at the memory
  # bound (-DMEMLIM), and still prints "errors: 0".
  incomplete=$(grep -ci 'out of memory\|search not completed\|reached -DMEMLIM\|max search depth too small' "$d/pan.log" || true)
  if [ -z "$errors" ]; then
    got=incomplete
  elif [ "$errors" != 0 ]; then
    got=fail
  elif [ "$incomplete" != 0 ]; then
    got=bounded
  else
    got=pass
  fi
  printf '%-26s %-7s %-7s %12s %8s  %s\n' "$name" "$want" "$got" "${states:-?}" "${secs:-?}" "$what"
  if [ "$got" != "$want" ]; then
    bad=1
    tail -20 "$d/pan.log"
  elif [ "$got" = fail ] && [ -n "${MODEL_TRAILS:-}" ]; then
    # The counterexample, step by step (MODEL_TRAILS=dir keeps them).
    mkdir -p "$MODEL_TRAILS"
    (cd "$d" && spin -t -p -g -l $flags slot.pml > "$MODEL_TRAILS/$name.txt" 2>&1 || true)
  fi
done
if [ $bad != 0 ]; then
  echo "model check: some variant did not behave as expected" >&2
  exit 1
fi
echo "model check: every shipped variant passes (or finds nothing within its bound), every broken one fails"
