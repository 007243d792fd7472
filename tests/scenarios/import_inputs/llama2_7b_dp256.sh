#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/7b_256xh100.yaml: Llama-2 7B on
# 32 DGX H100 nodes, pure data parallelism with the distributed optimizer (ZeRO-1).
# 1e12 tokens = 244,140,625 samples of 4,096 tokens.
# Launched by SLURM (sbatch --ntasks-per-node 8, one task per GPU): the GPU count is only in WORLD_SIZE.
GPUS_PER_NODE=8
export WORLD_SIZE=$((${SLURM_NNODES:-32} * GPUS_PER_NODE))
srun python pretrain_gpt.py \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --ffn-hidden-size 11008 \
    --swiglu --normalization RMSNorm --disable-bias-linear --position-embedding-type rope \
    --untie-embeddings-and-output-weights --attention-dropout 0.0 --hidden-dropout 0.0 \
    --tokenizer-type Llama2Tokenizer --tokenizer-model /models/llama2/tokenizer.model \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 1024 --train-samples 244140625 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --lr 3e-4 --min-lr 3e-5 --lr-decay-style cosine --lr-warmup-samples 2048000 --clip-grad 1.0 \
    --data-path /data/redpajama_text_document --save /ckpt --save-interval 2000 --log-interval 10
