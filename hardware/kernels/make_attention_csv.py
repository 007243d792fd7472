#!/usr/bin/env python3
"""Regenerates hardware/kernels/attention.csv from docs/reference/kernels/kernel_attention.csv.

Keeps the rows of the implementations the simulator names (AttentionImpl), with canonical GPU,
impl, dtype and pass names, and the source column. Rows left out, by class:
  * Triton, xformers: not an implementation the simulator offers;
  * "(via PyTorch)" / "PyTorch SDPA FA2 backend" duplicates of the direct kernels on B200/GB300;
  * H200 cuDNN 9.1 (2024) rows: superseded by the cuDNN 9.19 rows of the same GPU;
  * SKU-not-stated H100 rows (tritonbench/issues) and the power-limited 'devgpu';
  * in-training-step profiler buckets (not a kernel sweep);
  * deterministic backward (not the default);
  * rows whose causal flag is unknown;
  * sliding-window rows (cudnn-frontend's gpt_oss preset, window 128, FLOPs over the unmasked
    elements only): a window-128 rate under "causal" made every hdim-64 lookup on GB200/GB300
    (and B300, which borrows GB300's rows) 3-6x too slow. Their BF16 forward and backward rows
    live in attention_window.csv instead (hardware/attention_window.hpp), copied by hand on
    2026-12-06 with the same source column.
Usage: make_attention_csv.py <kernel_attention.csv> > attention.csv
"""
import csv
import sys

GPU = {
    "A100-SXM4-80GB": "A100",
    "H100-SXM5-80GB": "H100",
    "H200": "H200",
    "B200": "B200",
    "GB200": "GB200",
    "GB300": "GB300",
    "sm100 Blackwell (B200/GB200; SKU not stated)": "Blackwell-sm100",
}
IMPL = {
    "FlashAttention-1": "flash1",
    "FlashAttention-2": "flash2",
    "FlashAttention-2 2.7.4 (native)": "flash2",
    "PyTorch SDPA (FA2 backend, 2024)": "flash2",
    "FlashAttention-3": "flash3",
    "FlashAttention-3 (FP8)": "flash3",
    "cuDNN": "cudnn",
    "cuDNN (FP8)": "cudnn",
    "cuDNN SDPA": "cudnn",
    "cuDNN SDPA (direct)": "cudnn",
    "PyTorch SDPA math": "sdpa_math",
    "Standard attention": "unfused",
    "PyTorch-standard": "unfused",
}
DTYPE = {"fp16/bf16": "bf16", "bf16": "bf16", "bfloat16": "bf16", "bf16 (default)": "bf16",
         "fp8": "fp8", "fp8 (e4m3)": "fp8", "mxfp8": "mxfp8"}


def gpu_of(row):
    g = row["gpu"]
    if g.startswith("H200 (per README"):
        return "H200"  # the 2024 cudnn-frontend CSV; only its FA2 rows are kept (see impl below)
    if g.startswith("Blackwell (not stated; MFU"):
        return "Blackwell-2.5PF"  # the MFU column implies a 2.5 PF dense BF16 peak (GB200/GB300 class)
    return GPU.get(g)


def main():
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["gpu", "impl", "dtype", "pass", "causal", "head_dim_qk", "head_dim_v", "seq_len",
                  "batch", "heads", "tflops", "source"])
    for r in csv.DictReader(open(sys.argv[1])):
        gpu = gpu_of(r)
        impl = IMPL.get(r["impl"])
        if r["impl"].startswith("FlashAttention-4"):
            impl = "flash4"
        if r["gpu"].startswith("H200 (per README") and impl != "flash2":
            continue
        dtype = DTYPE.get(r["dtype"])
        p = r["pass"]
        if not gpu or not impl or not dtype or p not in ("fwd", "bwd", "fwd+bwd"):
            continue
        if "sliding window" in r["notes"]:
            continue
        c = r["causal"]
        if c.startswith("True"):
            causal = 1
        elif c.startswith("False") or c == "unstated (likely False)":
            causal = 0
        else:
            continue
        hd = r["head_dim"]
        if "/" in hd:
            qk, v = hd.split("(qk)")[0].strip(), hd.split("/")[1].split("(")[0].strip()
        else:
            qk = v = hd
        try:
            float(r["tflops"])
        except ValueError:
            continue  # OOM: no measurement
        heads = r["heads"].split(" q")[0]  # "64 q / 8 kv": query heads
        heads = heads if heads.isdigit() else "0"  # 0: not stated
        batch = r["batch"] if r["batch"].replace(".", "").isdigit() else "0"
        out.writerow([gpu, impl, dtype, p, causal, qk, v, r["seq_len"], batch, heads,
                      r["tflops"], r["source"].replace("\n", " ")])


if __name__ == "__main__":
    main()
