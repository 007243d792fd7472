#!/usr/bin/env bash
# Golden outputs: the exact bytes of a few `clustersim` commands, stored under tests/golden/.
#
#   golden.sh check BINARY [SOURCE_DIR]   compare every command's output with its stored file
#                                         (the ctest `golden_outputs`); exit 1 on any difference
#   golden.sh write BINARY [SOURCE_DIR]   run every command twice, refuse unless both runs agree
#                                         byte for byte, then replace the stored files
#                                         (tools/regen-golden is the front end)
#
# The cases (this list is the one place that names them):
#   run/<S>.json        clustersim run scenarios/<S>.yaml --json      every scenarios/*.yaml
#   explain/<S>.json    clustersim run scenarios/<S>.yaml --explain --json   the three in EXPLAIN
#   validate.json       clustersim validate --json
#   validate_moe.json   clustersim validate --moe --json
# Every command runs in SOURCE_DIR with a relative scenario path, so no output depends on where
# the checkout lives. A command must exit 0; a scenario meant to fail is listed in EXPECTED_FAIL
# with its reason, and its golden file holds stdout, stderr and the exit status instead.
set -uo pipefail

EXPLAIN=(7b_256xh100 70b_512xh100_tp8pp4 deepseek_v3_1024xh100)
# scenario stem -> why it exits non-zero (none today: every shipped scenario runs).
declare -A EXPECTED_FAIL=()

usage() { echo "usage: $0 check|write BINARY [SOURCE_DIR]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
mode=$1
bin=$(realpath "$2") || exit 2
src=$(realpath "${3:-$(dirname "$0")/../..}") || exit 2
golden="$src/tests/golden"
[[ $mode == check || $mode == write ]] || usage
[[ -x $bin ]] || { echo "golden: no executable at $bin (build it first)" >&2; exit 2; }

# Prints "<file>\t<arguments>" per case, sorted by file.
cases() {
  local y s
  for y in "$src"/scenarios/*.yaml; do
    s=$(basename "$y" .yaml)
    printf 'run/%s.json\trun scenarios/%s.yaml --json\n' "$s" "$s"
  done
  for s in "${EXPLAIN[@]}"; do
    printf 'explain/%s.json\trun scenarios/%s.yaml --explain --json\n' "$s" "$s"
  done
  printf 'validate.json\tvalidate --json\n'
  printf 'validate_moe.json\tvalidate --moe --json\n'
}

# Runs every case into directory $1, all at once (the commands are independent; validate is the
# slowest at a few seconds). Returns non-zero, with a message, when a command's exit status is
# not the expected one.
generate() {
  local out=$1 file args pids=() files=() argss=()
  mkdir -p "$out/run" "$out/explain"
  while IFS=$'\t' read -r file args; do
    # shellcheck disable=SC2086  # args is a list of plain words
    ( cd "$src" && exec "$bin" $args ) </dev/null >"$out/$file" 2>"$out/$file.stderr" &
    pids+=($!)
    files+=("$file")
    argss+=("$args")
  done < <(cases)
  local i rc bad=0 stem
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"; rc=$?
    file=${files[$i]}
    stem=$(basename "$file" .json)
    if [[ $file == run/* && -n ${EXPECTED_FAIL[$stem]:-} ]]; then
      if [[ $rc -eq 0 ]]; then
        echo "golden: $file: expected to fail (${EXPECTED_FAIL[$stem]}) but exited 0" >&2; bad=1
      fi
      { cat "$out/$file.stderr"; echo "exit status $rc"; } >>"$out/$file"
    elif [[ $rc -ne 0 ]]; then
      echo "golden: $file: 'clustersim ${argss[$i]}' exited $rc:" >&2
      head -20 "$out/$file.stderr" >&2
      bad=1
    fi
    rm -f "$out/$file.stderr"
  done
  return $bad
}

# The stored golden files, relative to tests/golden, sorted.
stored() { (cd "$golden" && find run explain -name '*.json' 2>/dev/null; ls validate*.json 2>/dev/null) | sort; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clustersim-golden.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

if [[ $mode == check ]]; then
  generate "$tmp/new" || { echo "run tools/regen-golden if the change is deliberate" >&2; exit 1; }
  failed=0
  while IFS=$'\t' read -r file args; do
    if [[ ! -f $golden/$file ]]; then
      echo "FAIL $file: no golden file for 'clustersim $args'"
      failed=1
    elif ! cmp -s "$golden/$file" "$tmp/new/$file"; then
      echo "FAIL $file: 'clustersim $args' differs from tests/golden/$file (first 40 lines of the diff):"
      diff -u --label "golden/$file" --label "now/$file" "$golden/$file" "$tmp/new/$file" | head -40
      failed=1
    fi
  done < <(cases)
  # A golden file no case writes (a scenario removed or renamed) is stale.
  while read -r file; do
    [[ -f $tmp/new/$file ]] || { echo "FAIL $file: stale golden file, no command writes it"; failed=1; }
  done < <(stored)
  n=$(cases | wc -l)
  if [[ $failed -ne 0 ]]; then
    echo "golden outputs differ: run tools/regen-golden if the change is deliberate (then review git diff tests/golden)"
    exit 1
  fi
  echo "golden: $n outputs identical to tests/golden"
  exit 0
fi

# write: two runs that agree, then replace the stored files.
generate "$tmp/a" || { echo "golden: nothing written" >&2; exit 1; }
generate "$tmp/b" || { echo "golden: nothing written" >&2; exit 1; }
if ! diff -r "$tmp/a" "$tmp/b" >"$tmp/nondet.diff"; then
  echo "golden: two runs of the same binary differ, nothing written (non-deterministic output):" >&2
  head -40 "$tmp/nondet.diff" >&2
  exit 1
fi
while read -r file; do rm -f "$golden/$file"; done < <(stored)
mkdir -p "$golden/run" "$golden/explain"
cp -r "$tmp/a/." "$golden/"
echo "golden: wrote $(cases | wc -l) outputs of $bin to tests/golden (two runs identical)"
