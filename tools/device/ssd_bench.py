# Needs mamba_ssm importable (pip package mamba-ssm, or its source tree on PYTHONPATH); run on a GPU machine.
# Times mamba_ssm's mamba_chunk_scan_combined (the five-kernel SSD Megatron-Core calls) forward and
# backward on this GPU, BF16, for Nemotron shapes; writes $OUT/ssd_h200.csv.
import os, sys, time, torch
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined

def run(name, b, L, H, P, G, N, Q, iters=10):
    dev, dt_ = 'cuda', torch.bfloat16
    x = torch.randn(b, L, H, P, device=dev, dtype=dt_, requires_grad=True)
    dt = torch.randn(b, L, H, device=dev, dtype=dt_, requires_grad=True)
    A = (-torch.rand(H, device=dev, dtype=torch.float32)).requires_grad_()
    B = torch.randn(b, L, G, N, device=dev, dtype=dt_, requires_grad=True)
    C = torch.randn(b, L, G, N, device=dev, dtype=dt_, requires_grad=True)
    D = torch.randn(H, device=dev, dtype=torch.float32, requires_grad=True)
    dt_bias = torch.randn(H, device=dev, dtype=torch.float32, requires_grad=True)
    f = lambda: mamba_chunk_scan_combined(x, dt, A, B, C, Q, D=D, dt_bias=dt_bias, dt_softplus=True)
    for _ in range(3):
        y = f(); y.backward(torch.ones_like(y))
    torch.cuda.synchronize()
    e = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
    fwd = bwd = 0.0
    g = torch.randn(b, L, H, P, device=dev, dtype=dt_)
    for _ in range(iters):
        e[0].record(); y = f(); e[1].record(); y.backward(g); e[2].record(); torch.cuda.synchronize()
        fwd += e[0].elapsed_time(e[1]); bwd += e[1].elapsed_time(e[2])
    fwd /= iters; bwd /= iters
    line = f"{name},{b},{L},{H},{P},{G},{N},{Q},{fwd*1e3:.1f},{bwd*1e3:.1f}"
    print(line, flush=True)
    return line

out = os.environ.get('OUT', '.')
rows = ["shape,batch,seqlen,heads,head_dim,groups,state_dim,chunk,fwd_us,bwd_us"]
t0 = time.time()
for args in [("nemotron3-nano tp1", 1, 8192, 64, 64, 8, 128, 128),
             ("nemotron3-super tp1", 1, 8192, 128, 64, 8, 128, 128),
             ("nemotron3-super tp2", 1, 8192, 64, 64, 4, 128, 128),
             ("nemotron3-nano tp1 mb4", 4, 8192, 64, 64, 8, 128, 128),
             ("nemotron-h-56b tp8", 1, 8192, 32, 64, 1, 256, 128)]:
    rows.append(run(*args))
    with open(os.path.join(out, 'ssd_h200.csv'), 'w') as fh: fh.write("\n".join(rows) + "\n")
    print('elapsed', round(time.time() - t0, 1), flush=True)
print(torch.__version__, __import__('triton').__version__, torch.cuda.get_device_name(0))
