#!/usr/bin/env bash
# Mixture-of-experts GPT: 8 experts, expert parallel 4, tensor parallel 2, two nodes.
NNODES=${NNODES:-2}
GPUS_PER_NODE=8
WORLD_SIZE=$((GPUS_PER_NODE * NNODES))

MOE_ARGS="--num-experts 8 --expert-model-parallel-size 4 --moe-router-topk 2 --moe-aux-loss-coeff 1e-2"
MODEL_ARGS="--num-layers 24 --hidden-size 2048 --ffn-hidden-size 8192 --num-attention-heads 16 \
  --seq-length 4096 --max-position-embeddings 4096"
TRAIN_ARGS="--micro-batch-size 2 --global-batch-size 256 --train-iters 20000 --bf16 --use-distributed-optimizer"

torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500 \
  pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 \
  $MOE_ARGS $MODEL_ARGS $TRAIN_ARGS --data-path /data/mix_text_document --tokenizer-type GPT2BPETokenizer
