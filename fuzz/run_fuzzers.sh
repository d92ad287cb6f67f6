#!/bin/sh
# Runs every fuzz target for SECONDS each, starting from the committed seeds and
# regression inputs plus the generated seeds in SEEDS/<target> (make_seeds.py), and
# growing the corpus in CORPUS/<target>. Crash inputs go to CORPUS/<target>/crash-*.
# Exits non-zero when any target found a crash, leak or sanitizer report.
#
# usage: fuzz/run_fuzzers.sh FUZZ_BUILD SECONDS SEEDS CORPUS [libFuzzer options...]
set -u
here=$(dirname "$0")
fuzz_build=$1 seconds=$2 seeds=$3 corpus=$4
shift 4
failed=0
for target in jfr_reader report agent_options elf_symbols demangle eh_frame; do
  mkdir -p "$corpus/$target"
  log="$corpus/$target.log"
  inputs=  # libFuzzer refuses a directory that does not exist (paths without spaces)
  for dir in "$here/seeds/$target" "$here/regressions/$target" "$seeds/$target"; do
    [ -d "$dir" ] && inputs="$inputs $dir"
  done
  # Recordings as seeds are 100 KB and more: whole, the report runs about ten of them
  # a second; mutated 8 KiB prefixes, some five hundred (and found more).
  case $target in jfr_reader|report) max_len=-max_len=8192 ;; *) max_len= ;; esac
  "$fuzz_build/fuzz/${target}_fuzzer" "$corpus/$target" $inputs $max_len \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$corpus/$target/" "$@" >"$log" 2>&1
  status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  coverage=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
  echo "$target: ${runs:-?} runs, $coverage, exit $status"
  if [ "$status" -ne 0 ]; then
    grep -m 5 -E 'ERROR|runtime error|Test unit written' "$log"
    failed=1
  fi
done
exit $failed
