#!/usr/bin/env bash
# Python vs CLI speed of one sweep (docs/python.md, "Speed"): the 1,024-configuration 7B sweep on one
# worker thread, run N times interleaved (CLI process timed whole with /usr/bin/time, the Python call
# timed around clustersim.sweep), wall and CPU (user + system) time, with the load average around each
# run; prints each pair, the medians and the median of the per-pair ratios. CPU time moves less than
# wall time on a shared machine. Not a test: it asserts nothing.
# Usage: tools/bench_python_sweep.sh [build-dir] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
runs=${2:-7}
[ -x "$build/tools/clustersim" ] && ls "$build"/python/clustersim*.so >/dev/null 2>&1 ||
  { echo "build clustersim and clustersim_python in $build first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/sweep.py" <<'PY'
import time, clustersim
t, cpu = time.perf_counter(), time.process_time()
rows = clustersim.sweep("scenarios/7b_256xh100.yaml",
                        vary={"cluster.gpus": [8, 16, 32, 64, 128, 256, 512, 1024], "training.micro_batch": [1, 2, 4, 8],
                              "training.recompute": ["none", "full"], "parallelism.zero_stage": [0, 1, 2, 3],
                              "parallelism.tp": [1, 2, 4, 8]},
                        set={"parallelism.dp": None}, threads=1)
print(f"{time.perf_counter() - t:.3f} {time.process_time() - cpu:.3f}")
PY
for i in $(seq 1 "$runs"); do
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -o "$tmp/t" -f "%e %U %S" "$build/tools/clustersim" sweep scenarios/7b_256xh100.yaml \
      --vary cluster.gpus=8,16,32,64,128,256,512,1024 --vary training.micro_batch=1,2,4,8 \
      --vary training.recompute=none,full --vary parallelism.zero_stage=0,1,2,3 --vary parallelism.tp=1,2,4,8 \
      --set parallelism.dp=null --threads 1 --csv "$tmp/sweep.csv" >/dev/null 2>&1
  py=$(PYTHONPATH="$build/python" python3 "$tmp/sweep.py")
  echo "$i $(cat "$tmp/t") $py $load $(cut -d' ' -f1 /proc/loadavg)"
done | tee "$tmp/runs" | awk '{printf "run %s: CLI %.2f s wall %.2f s CPU, Python %.3f s wall %.3f s CPU (load %s -> %s)\n", $1, $2, $3 + $4, $5, $6, $7, $8}'
python3 - "$tmp/runs" <<'PY'
import statistics as st, sys
rows = [line.split() for line in open(sys.argv[1])]
def report(what, cli, py):
    print(f"{what} median: CLI {st.median(cli):.3f} s, Python {st.median(py):.3f} s ({100 * (st.median(py) / st.median(cli) - 1):+.1f} %); "
          f"median per-pair ratio {100 * (st.median([p / c for c, p in zip(cli, py)]) - 1):+.1f} %")
report("wall", [float(r[1]) for r in rows], [float(r[4]) for r in rows])
report("CPU ", [float(r[2]) + float(r[3]) for r in rows], [float(r[5]) for r in rows])
PY
