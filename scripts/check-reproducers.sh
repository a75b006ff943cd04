#!/usr/bin/env bash
# Measures whether the reproducers cargo covcon writes still fail as plain `#[test]`s of the
# user's uninstrumented crate (docs/benchmarks-history.md "Shrinking", docs/results-oracle.md).
#
# It copies fixtures/ to a scratch directory, runs a campaign there with the release binary,
# puts each written reproducer (target/covcon/violations/N.rs) into its fixture crate's tests/
# as covcon_repro_N.rs, builds them the way each reproducer's header says (release, debug
# assertions and overflow checks on, as covcon's harness is built), runs each test binary under
# a timeout, and prints: violations written, how many were shrunk, the median ratio of shrunk to
# original calls, how many reproducers compile, how many fail (with the time to fail, median
# and max), and the ones that do not fail.
#
# Usage: scripts/check-reproducers.sh [--seed N] [--time-budget D] [--work DIR] [--no-build]
#                                     [--plain-release] [--limit SECONDS]
#   --seed N          campaign seed (default 3)
#   --time-budget D   campaign budget, as cargo covcon takes it (default 180s)
#   --work DIR        scratch directory, kept afterwards (default: a new one under /tmp)
#   --no-build        use target/release/cargo-covcon as it is
#   --plain-release   build the reproducers with the plain release profile instead
#   --limit SECONDS   kill a reproducer after this long (default 100; each stops by itself
#                     after a minute without failing)
# Takes the two cores for a while: about the budget, plus a minute per reproducer that does
# not fail, plus the fixture builds. Writes $WORK/reproducers.tsv, one row per reproducer.
set -euo pipefail

seed=3
budget=180s
work=""
build=1
plain=0
limit=100
while [ $# -gt 0 ]; do
  case "$1" in
    --seed) seed="$2"; shift 2 ;;
    --time-budget) budget="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --plain-release) plain=1; shift ;;
    --limit) limit="$2"; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument: $1 (see --help)" >&2; exit 1 ;;
  esac
done
for tool in cargo jq timeout; do
  command -v "$tool" >/dev/null || { echo "$tool is required" >&2; exit 1; }
done

root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${CARGO_TARGET_DIR:-$root/target}/release/cargo-covcon"
if [ "$build" = 1 ]; then
  echo "== building the release binary"
  (cd "$root" && nice -n 10 cargo build --release -q -p cargo-covcon)
fi
[ -x "$bin" ] || { echo "no binary at $bin (drop --no-build)" >&2; exit 1; }
work="${work:-$(mktemp -d /tmp/covcon-reproducers.XXXXXX)}"
fixtures="$work/fixtures"
rm -rf "$fixtures"
mkdir -p "$fixtures"
tar -C "$root/fixtures" --exclude=./target -cf - . | tar -C "$fixtures" -xf -
echo "== work directory: $work"

# The campaign. Exit code 2 means violations were found, which is what this is about.
echo "== cargo covcon --workspace --keep-going --oracle results --seed $seed --time-budget $budget"
status=0
(cd "$fixtures" && nice -n 10 "$bin" covcon --workspace --keep-going --oracle results \
  --seed "$seed" --time-budget "$budget" --quiet) >"$work/campaign.log" 2>&1 || status=$?
if [ "$status" != 0 ] && [ "$status" != 2 ]; then
  echo "the campaign failed (exit $status); see $work/campaign.log" >&2
  tail -20 "$work/campaign.log" >&2
  exit 1
fi
report="$fixtures/target/covcon/report.json"

# One row per written reproducer: package, type, kind, methods, file, shrunk (true/false),
# method calls of the test written and of the original, the same counting constructors.
jq -r '
  def calls: (.prefix | length) + (.threads[0] | length) + (.threads[1] | length);
  [.types[] | .package as $package | .path as $type | (.violations // [])[]
   | select(.reproducer != null and .test != null)
   | (.original_test // .test) as $original
   | [$package, $type, .kind, (.methods | join("|")), .reproducer, (.original_test != null),
      (.test | calls), ($original | calls),
      (.test | calls + (.instances | length)), ($original | calls + (.instances | length))]]
  | unique_by(.[4]) | sort_by(.[4] | split("/") | last | rtrimstr(".rs") | tonumber? // 0)
  | .[] | @tsv' "$report" >"$work/violations.tsv"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
written=$(wc -l <"$work/violations.tsv")
shrunk=$(awk -F'\t' '$6 == "true"' "$work/violations.tsv" | wc -l)
ratio=$(awk -F'\t' '$8 > 0 { print $7 / $8 }' "$work/violations.tsv" | median)
ratio_all=$(awk -F'\t' '$10 > 0 { print $9 / $10 }' "$work/violations.tsv" | median)
calls=$(awk -F'\t' '{ o += $8; s += $7 } END { print o + 0 " -> " s + 0 }' "$work/violations.tsv")

# Each reproducer goes into its package's tests/ directory.
if [ "$plain" = 0 ]; then
  export CARGO_PROFILE_RELEASE_DEBUG_ASSERTIONS=true CARGO_PROFILE_RELEASE_OVERFLOW_CHECKS=true
fi
(cd "$fixtures" && cargo metadata --offline --no-deps --format-version 1) \
  | jq -r '.packages[] | [.name, (.manifest_path | rtrimstr("/Cargo.toml"))] | @tsv' >"$work/packages.tsv"
while IFS=$'\t' read -r package _ _ _ file _; do
  dir=$(awk -F'\t' -v p="$package" '$1 == p { print $2 }' "$work/packages.tsv")
  number=$(basename "$file" .rs)
  mkdir -p "$dir/tests"
  case "$file" in /*) ;; *) file="$fixtures/$file" ;; esac
  cp "$file" "$dir/tests/covcon_repro_$number.rs"
done <"$work/violations.tsv"

# Builds every reproducer of each package at once, and one by one if that fails, so that one
# that does not compile does not hide the others. Answers "name<TAB>executable" lines.
build_tests() {
  local package="$1"; shift
  local args=()
  for name in "$@"; do args+=(--test "$name"); done
  (cd "$fixtures" && nice -n 10 cargo test --release --offline -q -p "$package" --no-run \
    --message-format=json "${args[@]}" 2>>"$work/build.log") \
    | jq -r 'select(.reason == "compiler-artifact" and .executable != null
                    and (.target.kind | index("test"))) | [.target.name, .executable] | @tsv'
}
echo "== building the reproducers"
: >"$work/executables.tsv"
for package in $(cut -f1 "$work/violations.tsv" | sort -u); do
  names=$(awk -F'\t' -v p="$package" '$1 == p { n = $5; sub(".*/", "", n); sub("\\.rs$", "", n); print "covcon_repro_" n }' "$work/violations.tsv")
  # shellcheck disable=SC2086
  if ! build_tests "$package" $names >>"$work/executables.tsv"; then
    for name in $names; do build_tests "$package" "$name" >>"$work/executables.tsv" || true; done
  fi
done

echo "== running the reproducers (each stops after a minute without failing)"
printf 'result\tseconds\ttype\tkind\tmethods\tfile\tcalls\toriginal_calls\tfirst_failure_line\n' >"$work/reproducers.tsv"
compiled=0
failing=0
times=()
not_failing=()
while IFS=$'\t' read -r package type kind methods file was_shrunk n o _ _; do
  number=$(basename "$file" .rs)
  exe=$(awk -F'\t' -v t="covcon_repro_$number" '$1 == t { print $2; exit }' "$work/executables.tsv")
  label="$type $kind ${methods/|/ ∥ } #$number ($o -> $n calls)"
  if [ -z "$exe" ]; then
    result="does-not-compile"; seconds="-"; line=""
    not_failing+=("$label: does not compile")
  else
    compiled=$((compiled + 1))
    log="$work/run-$number.log"
    start=$(date +%s.%N)
    code=0
    timeout "$limit" nice -n 10 "$exe" --quiet >"$log" 2>&1 || code=$?
    seconds=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
    line=$(grep -m1 -E "panicked at|wrong result in run|deadlock:" "$log" | cut -c1-160 || true)
    if [ "$code" = 0 ]; then
      result="passes"; not_failing+=("$label: passed its minute")
    elif [ "$code" = 124 ]; then
      result="killed"; not_failing+=("$label: still running after ${limit}s")
    else
      result="fails"; failing=$((failing + 1)); times+=("$seconds")
    fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$result" "$seconds" "$type" "$kind" \
    "$methods" "$file" "$n" "$o" "$line" >>"$work/reproducers.tsv"
  printf '  %-16s %6ss  %s\n' "$result" "$seconds" "$label"
done <"$work/violations.tsv"

time_median=$(printf '%s\n' "${times[@]:-}" | grep -v '^$' | median)
time_max=$(printf '%s\n' "${times[@]:-}" | grep -v '^$' | sort -g | tail -1)
profile="release, debug assertions and overflow checks on"
[ "$plain" = 1 ] && profile="plain release"
echo
echo "== summary (seed $seed, budget $budget, reproducers built $profile)"
echo "violations written:                      $written"
echo "shrunk to a smaller test:                $shrunk"
echo "method calls, shrunk / original, median: $ratio (counting constructors: $ratio_all)"
echo "method calls in all:                     $calls"
echo "reproducers compiling:                   $compiled of $written"
echo "reproducers failing within their minute: $failing of $compiled (time to fail: median ${time_median}s, max ${time_max:--}s)"
if [ "${#not_failing[@]}" -gt 0 ]; then
  echo "not failing:"
  printf '  %s\n' "${not_failing[@]}"
fi
echo "details: $work/reproducers.tsv, logs: $work/run-N.log"
