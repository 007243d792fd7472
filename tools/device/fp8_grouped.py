# FP8 (rowwise-scaled) grouped GEMMs on this GPU: torch._scaled_grouped_mm vs BF16 torch._grouped_mm,
# same shapes; dense torch._scaled_mm reference. Writes $OUT/fp8_grouped_h200.csv.
import os, time, torch
out = os.environ.get('OUT', '.'); dev = 'cuda'
rows = ["case,experts,tokens_per_expert,k,n,bf16_tflops,fp8_rowwise_tflops,notes"]
def timeit(fn, iters=20):
    for _ in range(3): fn()
    torch.cuda.synchronize(); t0 = time.perf_counter()
    for _ in range(iters): fn()
    torch.cuda.synchronize(); return (time.perf_counter() - t0) / iters
def case(name, E, T, K, N):
    flop = 2 * E * T * K * N
    a = torch.randn(E * T, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(E, N, K, device=dev, dtype=torch.bfloat16)
    offs = torch.arange(T, E * T + 1, T, device=dev, dtype=torch.int32)
    bf = flop / timeit(lambda: torch._grouped_mm(a, b.transpose(-2, -1), offs=offs)) / 1e12
    note = ""
    try:
        a8 = a.to(torch.float8_e4m3fn); b8 = b.to(torch.float8_e4m3fn)
        sa = torch.ones(E * T, device=dev, dtype=torch.float32); sb = torch.ones(E, N, device=dev, dtype=torch.float32)
        f8 = flop / timeit(lambda: torch._scaled_grouped_mm(a8, b8.transpose(-2, -1), sa, sb, offs=offs,
                                                             out_dtype=torch.bfloat16, use_fast_accum=True)) / 1e12
    except Exception as e:
        f8 = 0.0; note = (type(e).__name__ + ': ' + str(e)).replace(',', ';')[:160]
    rows.append(f"{name},{E},{T},{K},{N},{bf:.1f},{f8:.1f},{note}"); print(rows[-1], flush=True)
for T in (1024, 4096):
    case("qwen3-30b fc1", 8, T, 2048, 1536); case("qwen3-30b fc2", 8, T, 768, 2048)
case("torchao-shape fwd", 8, 16384, 7168, 2048)
case("dsv3 fc1 ep64", 4, 4096, 7168, 4096)
try:
    x = torch.randn(8192, 8192, device=dev).to(torch.float8_e4m3fn); y = torch.randn(8192, 8192, device=dev).to(torch.float8_e4m3fn)
    s1 = torch.ones(8192, 1, device=dev); s2 = torch.ones(1, 8192, device=dev)
    t = timeit(lambda: torch._scaled_mm(x, y.t(), s1, s2, out_dtype=torch.bfloat16, use_fast_accum=True))
    rows.append(f"dense 8192^3 _scaled_mm rowwise,1,8192,8192,8192,,{2*8192**3/t/1e12:.1f},"); print(rows[-1])
except Exception as e:
    rows.append(f"dense error,,,,,,,{str(e)[:120].replace(',', ';')}")
open(os.path.join(out, 'fp8_grouped_h200.csv'), 'w').write("\n".join(rows) + "\n")
