# CPU time PyTorch spends issuing ops (eager), on this machine's host CPU, and GPU rates of grouped
# expert GEMMs at small-expert shapes. Writes $OUT/host_ops.csv and $OUT/grouped_gemm.csv.
import os, time, torch, torch.nn.functional as F
out = os.environ.get('OUT', '.')
dev = 'cuda'
rows = ["op,cpu_us_per_call,gpu_us_per_call,notes"]

def cpu_time(fn, n=200, sync_each=False):
    for _ in range(20): fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n): fn()
    t1 = time.perf_counter()  # host time to issue n calls (GPU may still be running)
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / n * 1e6, (t2 - t0) / n * 1e6

def add(name, fn, n=200, notes=""):
    c, w = cpu_time(fn, n)
    rows.append(f"{name},{c:.2f},{w:.2f},{notes}"); print(rows[-1], flush=True)

x = torch.randn(8192, 2048, device=dev, dtype=torch.bfloat16)
lin = torch.nn.Linear(2048, 2048, bias=False, device=dev, dtype=torch.bfloat16)
with torch.no_grad():
    add("nn.Linear fwd 8192x2048x2048 (TE #2053 shape)", lambda: lin(x), notes="no_grad")
add("nn.Linear fwd 8192x2048x2048 autograd", lambda: lin(x), notes="grad enabled (builds graph)")
small = torch.randn(64, 64, device=dev)
add("tensor.add_ tiny", lambda: small.add_(1.0))
add("torch.add tiny (alloc)", lambda: torch.add(small, 1.0))
idx = torch.randint(0, 8192, (8192,), device=dev)
add("index_select 8192 rows", lambda: x.index_select(0, idx))
add("cumsum int", lambda: torch.cumsum(idx, 0))
m = torch.rand(8192, device=dev) > 0.5
add("masked_select (D2H sync)", lambda: torch.masked_select(idx, m), n=100, notes="syncs: nonzero size to host")
add("tensor.item() after tiny op (sync)", lambda: small.sum().item(), n=100)
w1 = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16, requires_grad=True)
xg = torch.randn(1024, 2048, device=dev, dtype=torch.bfloat16, requires_grad=True)
def fwd_bwd():
    y = F.linear(xg, w1); y.sum().backward()
add("F.linear fwd+sum+backward 1024x2048x2048", fwd_bwd, n=100, notes="4 fwd ops + autograd engine bwd")
with open(os.path.join(out, 'host_ops.csv'), 'w') as fh: fh.write("\n".join(rows) + "\n")

# Grouped expert GEMMs (torch._grouped_mm, BF16), Qwen3-30B-A3B expert shapes: 8 local experts.
g = ["case,experts,tokens_per_expert,k,n,fwd_tflops,dgrad_tflops,wgrad_tflops"]
def gemm_case(name, E, T, K, N, iters=20):
    a = torch.randn(E * T, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(E, N, K, device=dev, dtype=torch.bfloat16).transpose(-2, -1)
    offs = torch.arange(T, E * T + 1, T, device=dev, dtype=torch.int32)
    dy = torch.randn(E * T, N, device=dev, dtype=torch.bfloat16)
    bt = b.transpose(-2, -1)
    f = lambda: torch._grouped_mm(a, b, offs=offs)
    d = lambda: torch._grouped_mm(dy, bt, offs=offs)
    wg = lambda: torch._grouped_mm(dy.t(), a, offs=offs)
    res = []
    for fn in (f, d, wg):
        for _ in range(3): fn()
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(iters): fn()
        torch.cuda.synchronize(); dt = (time.perf_counter() - t0) / iters
        res.append(2 * E * T * K * N / dt / 1e12)
    g.append(f"{name},{E},{T},{K},{N},{res[0]:.1f},{res[1]:.1f},{res[2]:.1f}"); print(g[-1], flush=True)
try:
    for T in (512, 1024, 2048, 4096, 8192):
        gemm_case("qwen3-30b fc1", 8, T, 2048, 1536)
        gemm_case("qwen3-30b fc2", 8, T, 768, 2048)
    gemm_case("dsv3 fc1 ep64", 4, 4096, 7168, 4096)
    gemm_case("dsv3 fc2 ep64", 4, 4096, 2048, 7168)
    gemm_case("dense ref 8192x8192x8192", 1, 8192, 8192, 8192)
except Exception as e:
    g.append(f"error,{type(e).__name__}: {str(e)[:200]}"); print(g[-1])
with open(os.path.join(out, 'grouped_gemm.csv'), 'w') as fh: fh.write("\n".join(g) + "\n")
