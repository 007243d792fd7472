#!/usr/bin/env bash
# Sweep speed benchmark: builds clustersim_bench_sweep (Release) and runs it. Prints
# configurations/s of `sweep --auto-parallel` (Llama-3 70B on 1024 H100 and Llama-3 8B on
# 256 H100), the mean cost per configuration by outcome, the wall time of one Llama-3 405B run
# on 16,384 H100, events simulated per second, one DeepSeek-V3 step on 2,048 H800, and the wall
# time of `clustersim plan` for Llama-3 70B on 15T tokens within 90 days on H100 and for
# Qwen3-30B-A3B on at most 128 H100 (issue 30's targets in brackets). Not a test: it asserts
# nothing.
# Usage: tools/bench_sweep.sh [build-dir] [threads] [n]
#   threads 0 = every core; n > 1 sweeps only every n-th configuration (a quicker sample).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
threads=${2:-0}
every=${3:-1}
[ -f "$build/build.ninja" ] || [ -f "$build/Makefile" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target clustersim_bench_sweep clustersim -j2 >/dev/null
"$build/tools/clustersim_bench_sweep" "$threads" "$every"
# 5. The capacity-planning search of the issue: Llama-3 70B, 15T tokens, H100, 90 days.
start=$(date +%s%N)
summary=$("$build/tools/clustersim" plan --model llama3-70b --tokens 15e12 --hardware h100-sxm --days 90 2>&1 | head -3 | tail -1 || true)
end=$(date +%s%N)
echo "plan llama3-70b 15T tokens h100-sxm 90 days: $(( (end - start) / 1000000 )) ms wall; $summary"
# 6. An MoE plan search whose bound must prune (issue 30: <= 10 s): Qwen3-30B-A3B, 1T tokens,
#    30 days, at most 128 H100 (247,008 plans).
threads_flag=$([ "$threads" = 0 ] || echo "--threads $threads")
start=$(date +%s%N)
summary=$("$build/tools/clustersim" plan --model qwen3-30b-a3b --tokens 1T --days 30 --max-gpus 128 $threads_flag --no-progress 2>&1 | grep -m1 "simulated" || true)
end=$(date +%s%N)
echo "plan qwen3-30b-a3b 1T tokens 30 days <= 128 h100-sxm: $(( (end - start) / 1000000 )) ms wall [<= 10 s]; $summary"
