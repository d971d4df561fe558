#!/bin/bash
# Launch helper. Usage: NNODES=<n> bash scripts/run.sh
set -e
NNODES=${NNODES:-2}
GPUS_PER_NODE=8
export OMP_NUM_THREADS=8
CONFIG=configs/gpt_small.yaml

echo "launching on $NNODES nodes"
torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE \
    --rdzv_backend c10d --rdzv_endpoint ${MASTER_ADDR:-localhost}:29500 \
    train.py --config $CONFIG --micro_batch_size 16
