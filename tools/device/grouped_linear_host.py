# Host (CPU) time of a grouped expert GEMM as Megatron-Core issues it: Transformer Engine's GroupedLinear
# (one Python call; a C++ loop of cuBLAS GEMMs, nvte_multi_stream_cublas_gemm) at 1-32 GEMMs, and, where
# Transformer Engine is not installed, the nearest proxy: ATen GEMMs launched from one C++ loop
# (torch.utils.cpp_extension.load_inline) against the same GEMMs from a Python loop.
# The per-GEMM slope of these is the cost VALIDATION.md "Stop 55" found unmeasured (models/moe_ops.cpp
# charges each expert's GEMM a module call). Writes $OUT/grouped_linear_host.csv.
import os, time, torch

out = os.environ.get('OUT', '.')
dev = 'cuda'
rows = ["impl,gemms,tokens_per_gemm,pass,cpu_us_per_call,gpu_us_per_call,notes"]


def timed(fn, n=100):
    for _ in range(10): fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n): fn()
    t1 = time.perf_counter()  # host time to issue n calls
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6


def add(impl, g, m, pas, fn, notes=""):
    try:
        c, w = timed(fn)
        rows.append(f"{impl},{g},{m},{pas},{c:.2f},{w:.2f},{notes}")
    except Exception as e:  # record, do not stop the other measurements
        rows.append(f"{impl},{g},{m},{pas},,,failed: {type(e).__name__}")
    print(rows[-1], flush=True)


H, F, M = 2048, 1536, 256  # Qwen3-235B-like expert (hidden 4096 halved to keep memory small), 256 tokens each
gemm_counts = [1, 2, 4, 8, 16, 32]

try:
    import transformer_engine.pytorch as te
    for g in gemm_counts:
        layer = te.GroupedLinear(g, H, F, bias=False, params_dtype=torch.bfloat16, device=dev)
        x = torch.randn(g * M, H, device=dev, dtype=torch.bfloat16, requires_grad=True)
        splits = [M] * g
        with torch.no_grad():
            add("te.GroupedLinear", g, M, "fwd", lambda: layer(x, splits), "no_grad")
        def fwd_bwd():
            layer(x, splits).sum().backward()
        add("te.GroupedLinear", g, M, "fwd+bwd", fwd_bwd, "autograd")
except ImportError:
    rows.append("te.GroupedLinear,,,,,,transformer_engine not installed")
    print(rows[-1], flush=True)

try:
    from torch.utils.cpp_extension import load_inline
    src = """
#include <torch/extension.h>
std::vector<torch::Tensor> loop_mm(const std::vector<torch::Tensor>& xs, const std::vector<torch::Tensor>& ws) {
  std::vector<torch::Tensor> out;
  out.reserve(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) out.push_back(at::mm(xs[i], ws[i]));
  return out;
}
"""
    ext = load_inline(name="loop_mm_ext", cpp_sources=src, functions=["loop_mm"], verbose=False)
    for g in gemm_counts:
        xs = [torch.randn(M, H, device=dev, dtype=torch.bfloat16) for _ in range(g)]
        ws = [torch.randn(H, F, device=dev, dtype=torch.bfloat16) for _ in range(g)]
        add("aten::mm C++ loop", g, M, "fwd", lambda: ext.loop_mm(xs, ws), "one Python call")
        add("torch.mm Python loop", g, M, "fwd", lambda: [torch.mm(a, b) for a, b in zip(xs, ws)], "a Python call each")
except Exception as e:
    rows.append(f"aten::mm C++ loop,,,,,,build failed: {type(e).__name__}")
    print(rows[-1], flush=True)

with open(os.path.join(out, "grouped_linear_host.csv"), "w") as f:
    f.write(f"# torch {torch.__version__}, {torch.cuda.get_device_name()}, host: {os.uname().machine}\n")
    f.write("\n".join(rows) + "\n")
