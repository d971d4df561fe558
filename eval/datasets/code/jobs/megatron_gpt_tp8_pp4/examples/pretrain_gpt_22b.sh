#!/bin/bash
# 22B GPT on 8 nodes of 8 GPUs: TP=8 inside a node, PP=4 across nodes, DP=2.
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=8
NNODES=8
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=6000
DATA_PATH=/data/pile/pile_text_document
CHECKPOINT_PATH=/ckpt/gpt22b

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK \
    --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

GPT_ARGS=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 4
    --num-layers 48
    --hidden-size 6144
    --num-attention-heads 48
    --seq-length 2048
    --max-position-embeddings 2048
    --micro-batch-size 1
    --global-batch-size 512
    --lr 1.0e-4
    --train-iters 100000
    --lr-decay-style cosine
    --bf16
)

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \
    "${GPT_ARGS[@]}" \
    --data-path $DATA_PATH \
    --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt \
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH \
    --log-interval 10 --eval-interval 1000 --eval-iters 10
