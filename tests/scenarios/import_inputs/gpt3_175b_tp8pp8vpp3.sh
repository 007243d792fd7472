#!/bin/bash
# Megatron-LM launch script for the configuration of scenarios/175b_1024xa100.yaml: GPT-3 175B on
# 128 DGX A100 nodes as in Narayanan et al. 2021 (examples/gpt3/train_gpt3_175b_distributed.sh
# layout): TP8 PP8 with the interleaved schedule (4 layers per model chunk = vpp 3), sequence
# parallelism, selective recompute, distributed optimizer. Megatron's defaults give GPT-3's
# LayerNorm, GeLU, learned positions, tied embeddings, biases and dropout 0.1.
# 3e11 tokens = 146,484,375 samples of 2,048 tokens.
GPUS_PER_NODE=8
NUM_NODES=128
MODEL_ARGS="--num-layers 96 --hidden-size 12288 --num-attention-heads 96 --seq-length 2048 --max-position-embeddings 2048"
PARALLEL_ARGS="--tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 \
    --num-layers-per-virtual-pipeline-stage 4 --sequence-parallel --use-distributed-optimizer \
    --overlap-grad-reduce --overlap-param-gather"
torchrun --nproc_per_node=$GPUS_PER_NODE --nnodes=$NUM_NODES pretrain_gpt.py \
    $MODEL_ARGS $PARALLEL_ARGS \
    --micro-batch-size 1 --global-batch-size 1536 --train-samples 146484375 \
    --recompute-activations --bf16 \
    --tokenizer-type GPT2BPETokenizer --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt \
    --lr 6.0e-5 --min-lr 6.0e-6 --lr-decay-style cosine --weight-decay 0.1 --clip-grad 1.0 \
    --adam-beta1 0.9 --adam-beta2 0.95 --init-method-std 0.006 \
    --data-path /data/pile_text_document --split 949,50,1 --log-interval 100 --eval-iters 10
