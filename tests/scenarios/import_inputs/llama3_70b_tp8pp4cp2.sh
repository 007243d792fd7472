#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/70b_512xh100_tp8pp4.yaml:
# Llama-3 70B on 64 DGX H100 nodes, TP8 (sequence parallel) PP4 (1F1B) CP2, distributed optimizer.
GPUS_PER_NODE=8
NNODES=${SLURM_NNODES:-64}
DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NNODES
    --master_addr ${MASTER_ADDR:-localhost}
    --master_port 6000
)
MODEL_ARGS=(
    --num-layers 80
    --hidden-size 8192
    --ffn-hidden-size 28672
    --num-attention-heads 64
    --group-query-attention
    --num-query-groups 8
    --swiglu
    --normalization RMSNorm
    --disable-bias-linear
    --position-embedding-type rope
    --untie-embeddings-and-output-weights
    --attention-dropout 0.0
    --hidden-dropout 0.0
    --tokenizer-type HuggingFaceTokenizer
    --tokenizer-model meta-llama/Meta-Llama-3-70B
)
SEQ=8192
TRAINING_ARGS="--seq-length $SEQ --max-position-embeddings $SEQ --micro-batch-size 1 --global-batch-size 512 \
    --train-samples 1831054688 --lr 1.5e-4 --min-lr 1.5e-5 --lr-decay-style cosine --weight-decay 0.1 \
    --clip-grad 1.0 --bf16"
PARALLEL_ARGS=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 4
    --context-parallel-size 2
    --sequence-parallel
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)
torchrun "${DISTRIBUTED_ARGS[@]}" pretrain_gpt.py \
    "${MODEL_ARGS[@]}" \
    $TRAINING_ARGS \
    "${PARALLEL_ARGS[@]}" \
    --data-path /data/tokens_text_document --split 99,1,0 \
    --log-interval 10 --save /ckpt --save-interval 1000 --eval-interval 1000 --eval-iters 10  # logging and I/O
