#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/qwen3_235b_256xgb200.yaml:
# Qwen3-235B-A22B on 256 GB200 (64 hosts of 4 GPUs; 64 GPUs of each NVL72 rack's NVLink domain,
# given to the importer with --gpus-per-node 64), TP1 PP8 with 3 model chunks per stage (the
# embedding and the loss counted in the split: 94 + 2 = 96 over 24 chunks), EP32, ZeRO-1, MXFP8,
# the HybridEP flex dispatcher with the EP all-to-alls overlapped, routing force-balanced as
# NVIDIA's benchmarks do (Megatron-Bridge recipe QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2).
torchrun --nnodes 64 --nproc-per-node 4 pretrain_gpt.py \
    --num-layers 94 --hidden-size 4096 --ffn-hidden-size 12288 --num-attention-heads 64 \
    --group-query-attention --num-query-groups 4 --kv-channels 128 --qk-layernorm \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 --moe-layer-freq 1 \
    --moe-grouped-gemm --moe-router-force-load-balancing \
    --swiglu --normalization RMSNorm --disable-bias-linear --position-embedding-type rope \
    --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0 \
    --vocab-size 151936 --tokenizer-type HuggingFaceTokenizer --tokenizer-model Qwen/Qwen3-235B-A22B \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 8 --num-virtual-stages-per-pipeline-rank 3 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --expert-model-parallel-size 32 --expert-tensor-parallel-size 1 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --overlap-moe-expert-parallel-comm \
    --moe-router-fusion --moe-permute-fusion --cuda-graph-impl local --cuda-graph-scope full_iteration \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 8192 \
    --bf16 --fp8-format e4m3 --fp8-recipe mxfp8 \
    --mock-data --train-iters 50 --log-interval 1
