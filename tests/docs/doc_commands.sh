#!/usr/bin/env bash
# Runs every command shown in a fenced ```sh block of README.md and docs/*.md, as a reader would from the
# repository root, and checks its exit status (ctest `docs_commands`). Usage:
#   tests/docs/doc_commands.sh BUILD_DIR SOURCE_DIR [FILE.md ...]     (default: README.md docs/*.md)
#   tests/docs/doc_commands.sh --list SOURCE_DIR [FILE.md ...]        the commands and what is expected of each
# Each line of a block is one command (a trailing \ continues it); `#` lines are comments. The commands
# run in a scratch folder that links scenarios/, tests/, docs/, tools/, data/ and build/ of the checkout, with `clustersim`
# on the PATH, so outputs they write (-o, --csv, --html) land there. Markers, an HTML comment on the line
# just before the opening fence:
#   <!-- doc-test: exit N -->        every command of the block must exit N (a command meant to fail)
#   <!-- doc-test: skip REASON -->   the block is not run (a Slurm job script, an example of a file's text)
# Set-up and build commands (tools/setup.sh, cmake, ctest, tools/fuzz) are not run: the suite itself is
# their test; nor are Python commands when the build has no Python module. An unmarked command must exit 0; a marker must be one of the two forms.
set -uo pipefail

list_only=0
if [[ ${1:-} == --list ]]; then list_only=1; shift; build=""; else build=$(cd "${1:?build dir}" && pwd); shift; fi
src=$(cd "${1:?source dir}" && pwd); shift
files=("$@")
[[ ${#files[@]} -gt 0 ]] || files=("$src/README.md" "$src"/docs/*.md)
setup_re='^(tools/setup\.sh|cmake |ctest |tools/fuzz)'

# Prints "FILE:LINE<TAB>EXPECT<TAB>COMMAND" for every command of every sh block (EXPECT: a number or skip:…).
extract() {
  awk -v file="$1" '
    function flush() { if (cmd != "") { print file ":" start "\t" expect "\t" cmd }; cmd = "" }
    /^<!-- doc-test: / { marker = $0; marker_line = NR; next }
    /^```sh[ \t]*$/ && !inblock {
      inblock = 1; expect = "0"
      if (marker_line == NR - 1) {
        if (marker ~ /^<!-- doc-test: exit [0-9]+ -->$/) { split(marker, w, " "); expect = w[4] }
        else if (marker ~ /^<!-- doc-test: skip .+ -->$/) { sub(/^<!-- doc-test: skip /, "", marker); sub(/ -->$/, "", marker); expect = "skip: " marker }
        else { print file ":" marker_line "\tbad\t" marker }
      }
      next
    }
    /^```/ && inblock { flush(); inblock = 0; next }
    inblock {
      line = $0
      if (cmd == "") { if (line ~ /^[ \t]*(#|$)/) next; start = NR }
      cont = line ~ /\\[ \t]*$/
      if (cont) sub(/\\[ \t]*$/, "", line)
      cmd = cmd line
      if (!cont) flush()
    }' "$1"
}

if [[ $list_only -eq 1 ]]; then
  for f in "${files[@]}"; do extract "$f"; done
  exit 0
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/clustersim_docs.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for d in scenarios tests docs tools data; do ln -s "$src/$d" "$scratch/$d"; done
ln -s "$build" "$scratch/build"
export PATH="$build/tools:$PATH"

run=0 skipped=0 failed=0
while IFS=$'\t' read -r where expect cmd; do
  if [[ $expect == bad ]]; then
    echo "FAIL $where: unknown marker '$cmd' (allowed: <!-- doc-test: exit N --> or <!-- doc-test: skip REASON -->)"
    failed=$((failed + 1)); continue
  fi
  if [[ $expect == skip:* ]]; then skipped=$((skipped + 1)); continue; fi
  if [[ $cmd =~ $setup_re ]]; then skipped=$((skipped + 1)); continue; fi
  if [[ $cmd == *PYTHONPATH=build/python* ]] && ! compgen -G "$build/python/clustersim*.so" >/dev/null; then
    echo "skip $where: the Python module was not built (pybind11 or the Python headers missing)"
    skipped=$((skipped + 1)); continue
  fi
  out=$(cd "$scratch" && timeout 300 bash -c "$cmd" 2>&1 </dev/null)
  rc=$?
  run=$((run + 1))
  if [[ $rc -ne $expect ]]; then
    echo "FAIL $where: exit $rc, expected $expect: $cmd"
    echo "$out" | tail -5 | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done < <(for f in "${files[@]}"; do extract "$f" | sed "s#^$src/##"; done)

echo "doc commands: $run run, $skipped skipped (set-up or marked), $failed failed"
[[ $failed -eq 0 && $run -gt 0 ]]
