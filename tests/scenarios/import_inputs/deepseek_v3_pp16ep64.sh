#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/deepseek_v3_1024xh100.yaml:
# DeepSeek-V3 (MLA, 256 routed experts top-8 + 1 shared, 3 dense layers, one MTP module) on 128
# DGX H100 nodes, no TP, PP16 (4 layers per stage, 1 on the last: its MTP module and the head take
# the rest), EP64, ZeRO-1, FP8 with blockwise scaling, DeepEP dispatch overlapped with compute,
# selective recompute of the norms, the MLA up-projections and the routed MLP.
# 1.48e13 tokens = 3,613,281,250 samples of 4,096 tokens.
NNODES=${NNODES:-128}
GPUS_PER_NODE=8
MODEL=(
    --num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128
    --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512
    --qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128
    --num-experts 256 --moe-router-topk 8 --moe-ffn-hidden-size 2048
    --moe-shared-expert-intermediate-size 2048 --moe-layer-freq "([0]*3+[1]*58)"
    --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-topk-scaling-factor 2.5
    --moe-router-num-groups 8 --moe-router-group-topk 4
    --moe-grouped-gemm --moe-permute-fusion
    --mtp-num-layers 1
    --swiglu --normalization RMSNorm --disable-bias-linear --position-embedding-type rope
    --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0
    --vocab-size 129280 --tokenizer-type HuggingFaceTokenizer --tokenizer-model deepseek-ai/DeepSeek-V3
)
PARALLEL=(
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 16
    --decoder-last-pipeline-num-layers 1
    --expert-model-parallel-size 64 --expert-tensor-parallel-size 1
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep
    --overlap-moe-expert-parallel-comm
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather
)
TRAINING=(
    --seq-length 4096 --max-position-embeddings 4096
    --micro-batch-size 1 --global-batch-size 15360 --train-samples 3613281250
    --bf16 --fp8-format e4m3 --fp8-recipe blockwise
    --recompute-granularity selective --recompute-modules layernorm mla_up_proj moe
)
torchrun --nnodes $NNODES --nproc-per-node $GPUS_PER_NODE pretrain_gpt.py \
    "${MODEL[@]}" "${PARALLEL[@]}" "${TRAINING[@]}" \
    --lr 2.2e-4 --min-lr 2.2e-5 --data-path /data/dsv3_text_document --save /ckpt
