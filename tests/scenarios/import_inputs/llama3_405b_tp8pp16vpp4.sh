#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/405b_16384xh100.yaml: Llama 3 405B
# on 2,048 DGX H100 nodes, TP8 (sequence parallel) PP16 with 4 model chunks per stage, DP128,
# selective recompute. The embedding and the loss count as a layer each in the pipeline split
# (126 + 2 = 128 over 64 chunks: 1, 2 x 62, 1). ZeRO-2 (optimizer states and gradients sharded,
# parameters not) is Megatron-FSDP's optim_grads strategy. 1.56e13 tokens = 1,904,296,875 samples.
NNODES=2048
GPUS_PER_NODE=8
ARGS=(
    --num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 --num-attention-heads 128
    --group-query-attention --num-query-groups 8 --kv-channels 128
    --swiglu --normalization RMSNorm --disable-bias-linear --position-embedding-type rope
    --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0
    --tokenizer-type HuggingFaceTokenizer --tokenizer-model meta-llama/Llama-3.1-405B
    --tensor-model-parallel-size 8 --sequence-parallel
    --pipeline-model-parallel-size 16 --num-virtual-stages-per-pipeline-rank 4
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split
    --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads
    --overlap-grad-reduce --overlap-param-gather
    --seq-length 8192 --max-position-embeddings 8192
    --micro-batch-size 1 --global-batch-size 2048 --train-samples 1904296875
    --recompute-granularity selective --bf16
)
torchrun --nproc-per-node $GPUS_PER_NODE --nnodes $NNODES pretrain_gpt.py "${ARGS[@]}" \
    --lr 8e-5 --min-lr 8e-7 --lr-decay-style cosine --data-path /data/llama3_text_document
