#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/gpt_oss_120b_64xh100.yaml:
# GPT-OSS-120B (128 experts top-4, alternating 128-token sliding-window and full attention,
# biased projections) on 8 DGX H100 nodes, TP1 PP1 EP64, ZeRO-1, BF16, selective recompute,
# the all-to-all dispatcher. Megatron-LM's arguments have no GLU clamp (Megatron-Bridge's GPT-OSS
# provider sets activation_func_clamp_value), so the test runs the scenario without it.
NNODES=8
GPUS_PER_NODE=8
torchrun --nnodes $NNODES --nproc-per-node $GPUS_PER_NODE pretrain_gpt.py \
    --num-layers 36 --hidden-size 2880 --ffn-hidden-size 2880 --num-attention-heads 64 \
    --group-query-attention --num-query-groups 8 --kv-channels 64 \
    --window-size 128,0 --window-attn-skip-freq 2 \
    --num-experts 128 --moe-router-topk 4 --moe-ffn-hidden-size 2880 --moe-grouped-gemm \
    --swiglu --normalization RMSNorm --position-embedding-type yarn \
    --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0 \
    --vocab-size 201088 --tokenizer-type HuggingFaceTokenizer --tokenizer-model openai/gpt-oss-120b \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 64 \
    --moe-token-dispatcher-type alltoall \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 1280 \
    --recompute-granularity selective --bf16 \
    --mock-data --train-iters 100
