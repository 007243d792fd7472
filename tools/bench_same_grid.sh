#!/usr/bin/env bash
# Same-work sweep benchmark (not a test: it asserts nothing). Runs the configurations of the
# Llama-3 70B `sweep --auto-parallel` benchmark (tools/bench_sweep.cpp: 1,024 H100, seq 8192,
# global batch 1,024) that both binaries can simulate — 1F1B and interleaved schedules, pp·vpp
# dividing the 80 layers (before uneven pipeline splits, a loader rejected the others) — through
# two clustersim binaries, one thread each, and prints each one's user CPU time and how many
# configurations it simulated. Use it to compare a build with an older one on identical work, e.g.
# the commit before the network redesign:
#   git worktree add /tmp/old c114f43 && cmake -S /tmp/old -B /tmp/old/build -G Ninja &&
#   cmake --build /tmp/old/build --target clustersim && tools/bench_same_grid.sh /tmp/old/build/tools/clustersim
# Usage: tools/bench_same_grid.sh OLD_BINARY [NEW_BINARY (default build/tools/clustersim)]
set -euo pipefail
old=${1:?usage: tools/bench_same_grid.sh OLD_BINARY [NEW_BINARY]}
new=${2:-build/tools/clustersim}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/b70.yaml" <<'EOF'
name: bench
model: llama3-70b
hardware: h100-sxm
cluster:
  gpus: 1024
training:
  seq_len: 8192
  global_batch: 1024
  tokens: 15e12
EOF
run() {  # binary tag -> "user_seconds simulated_count"
  local bin=$1 tag=$2 flags=()
  "$bin" sweep --help 2>&1 | grep -q -- --schedules && flags=(--schedules 1f1b,interleaved)
  TIMEFORMAT="%U"
  local t
  t=$( { time (for pv in 1:1 2:1 2:2 2:4 4:1 4:2 4:4 8:1 8:2 16:1; do
        "$bin" sweep "$dir/b70.yaml" --auto-parallel --threads 1 --set parallelism.pp=${pv%:*} \
          --set parallelism.vpp=${pv#*:} "${flags[@]}" --csv "$dir/$tag-${pv/:/_}.csv" >/dev/null 2>&1
      done) ; } 2>&1 )
  ok=$(cat "$dir"/$tag-*.csv | grep -c ',ok,' || true)
  echo "$t $ok"
}
read -r old_s old_ok <<<"$(run "$old" old)"
read -r new_s new_ok <<<"$(run "$new" new)"
echo "70B sweep, configurations both can simulate (1F1B/interleaved, pp·vpp | 80 layers), one thread:"
echo "  $old: $old_s s user CPU, $old_ok simulated"
echo "  $new: $new_s s user CPU, $new_ok simulated"
awk -v a="$old_s" -v b="$new_s" 'BEGIN { if (a > 0) printf "  new / old CPU: %.2f\n", b / a }'
