"""DeepSpeed (native engine) and Megatron-style jobs."""

import json

from .common import job


def ds_json(stage, micro, accum, total, fp16=False, bf16=False, extra=None):
    cfg = {
        "train_batch_size": total,
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": accum,
        "gradient_clipping": 1.0,
        "zero_optimization": {"stage": stage, "overlap_comm": True, "contiguous_gradients": True,
                              "reduce_bucket_size": 5e8},
        "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "weight_decay": 0.1}},
        "steps_per_print": 100,
        "wall_clock_breakdown": False,
    }
    if fp16:
        cfg["fp16"] = {"enabled": True, "loss_scale": 0, "initial_scale_power": 16}
    if bf16:
        cfg["bf16"] = {"enabled": True}
    if stage == 3:
        cfg["zero_optimization"].update({"stage3_prefetch_bucket_size": 5e7, "stage3_param_persistence_threshold": 1e5})
    cfg.update(extra or {})
    return json.dumps(cfg, indent=2) + "\n"


DS_GPT = '''
"""GPT-2 family language model trained with the DeepSpeed engine."""
import argparse

import deepspeed
import torch
from transformers import AutoModelForCausalLM

from tokens import token_loader


def get_args():
    parser = argparse.ArgumentParser(description="DeepSpeed LM training")
    parser.add_argument("--model", type=str, default="gpt2")
    parser.add_argument("--seq_len", type=int, default=1024)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--local_rank", type=int, default=-1)
    parser = deepspeed.add_config_arguments(parser)
    return parser.parse_args()


def main():
    args = get_args()
    deepspeed.init_distributed()
    model = AutoModelForCausalLM.from_pretrained(args.model)
    engine, optimizer, _, _ = deepspeed.initialize(args=args, model=model,
                                                   model_parameters=model.parameters(),
                                                   config=args.deepspeed_config)
    loader = token_loader("/data/openwebtext", args.seq_len, engine.train_micro_batch_size_per_gpu())
    for epoch in range(args.epochs):
        for batch in loader:
            batch = batch.to(engine.device)
            loss = engine(input_ids=batch, labels=batch).loss
            engine.backward(loss)
            engine.step()


if __name__ == "__main__":
    main()
'''
TOKENS = '''
import torch


def token_loader(path, seq_len, micro_batch):
    data = torch.randint(0, 50257, (4096, seq_len))
    return torch.utils.data.DataLoader(data, batch_size=micro_batch, shuffle=True)
'''

job("deepspeed_zero1_gpt2",
    "deepspeed --num_gpus 8 train_ds.py --deepspeed --deepspeed_config ds_zero1.json --model gpt2 --epochs 2",
    {"train_ds.py": DS_GPT, "tokens.py": TOKENS, "ds_zero1.json": ds_json(1, 8, 4, 256, fp16=True)},
    framework="deepspeed", model_family="gpt", model_name="gpt2", params=124e6,
    parallelism={"data": "zero", "zero_stage": 1}, num_nodes=1, gpus_per_node=8, num_gpus=8,
    micro_batch_size=8, global_batch_size=256, grad_accum_steps=4, seq_len=1024, epochs=2, precision="fp16")

job("deepspeed_zero3_gpt2_xl_hostfile",
    "deepspeed --hostfile hostfile train_ds.py --deepspeed --deepspeed_config configs/zero3.json "
    "--model gpt2-xl --seq_len 2048",
    {"train_ds.py": DS_GPT, "tokens.py": TOKENS,
     "configs/zero3.json": ds_json(3, 2, 4, 256, bf16=True),
     "hostfile": "# 4 nodes, 8 A100 each\nworker-0 slots=8\nworker-1 slots=8\nworker-2 slots=8\nworker-3 slots=8\n"},
    framework="deepspeed", model_family="gpt", model_name="gpt2-xl", params=1.5e9,
    parallelism={"data": "zero", "zero_stage": 3}, num_nodes=4, gpus_per_node=8, num_gpus=32,
    micro_batch_size=2, global_batch_size=256, grad_accum_steps=4, seq_len=2048, epochs=1, precision="bf16")

job("trap_ds_config_not_used",
    "deepspeed --num_nodes 2 --num_gpus 8 --hostfile hostfile train_ds.py --deepspeed "
    "--deepspeed_config ds_zero2.json --model gpt2-medium",
    {"train_ds.py": DS_GPT.replace('"""GPT-2 family language model trained with the DeepSpeed engine."""',
                                   '"""GPT-2 family LM. We always run ZeRO-3 with ds_zero3.json (see README)."""'),
     "tokens.py": TOKENS,
     "ds_zero2.json": ds_json(2, 4, 2, 128, fp16=True),
     "ds_zero3.json": ds_json(3, 1, 16, 512, bf16=True),
     "hostfile": "gpu-a slots=8\ngpu-b slots=8\ngpu-c slots=8\ngpu-d slots=8\n",
     "README.md": "# GPT-2 medium\nTrained with ZeRO-3 (`ds_zero3.json`) on 32 GPUs, micro batch 1.\n"},
    notes="docstring/README and an unused ZeRO-3 config lie; the command uses ZeRO-2 on 2 of 4 hosts",
    framework="deepspeed", model_family="gpt", model_name="gpt2-medium", params=355e6,
    parallelism={"data": "zero", "zero_stage": 2}, num_nodes=2, gpus_per_node=8, num_gpus=16,
    micro_batch_size=4, global_batch_size=128, grad_accum_steps=2, seq_len=1024, epochs=1, precision="fp16")

BERT_DS = '''
"""BERT-large pre-training (MLM) with DeepSpeed ZeRO-2."""
import argparse

import deepspeed
import torch
from transformers import BertConfig, BertForMaskedLM

ap = argparse.ArgumentParser()
ap.add_argument("--max_seq_length", type=int, default=128)
ap.add_argument("--max_steps", type=int, default=100000)
ap.add_argument("--local_rank", type=int, default=0)
ap.add_argument("--ds_config", default="configs/ds_bert.json")
args = ap.parse_args()

config = BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                    intermediate_size=4096, max_position_embeddings=512)
model = BertForMaskedLM(config)
engine, opt, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=args.ds_config)
step = 0
while step < args.max_steps:
    ids = torch.randint(0, 30522, (engine.train_micro_batch_size_per_gpu(), args.max_seq_length), device=engine.device)
    loss = engine(input_ids=ids, labels=ids).loss
    engine.backward(loss)
    engine.step()
    step += 1
'''
job("deepspeed_zero2_bert_large",
    "deepspeed --num_nodes 2 --num_gpus 8 --hostfile hosts pretrain_bert.py --max_seq_length 512",
    {"pretrain_bert.py": BERT_DS, "configs/ds_bert.json": ds_json(2, 16, 2, 512, bf16=True),
     "hosts": "bert-node-1 slots=8\nbert-node-2 slots=8\n"},
    framework="deepspeed", model_family="bert", params=340e6,
    parallelism={"data": "zero", "zero_stage": 2}, num_nodes=2, gpus_per_node=8, num_gpus=16,
    micro_batch_size=16, global_batch_size=512, grad_accum_steps=2, seq_len=512, train_steps=100000,
    precision="bf16")

PRETRAIN_GPT = '''
"""Pretrain GPT (Megatron-LM style entry point)."""
from functools import partial

import torch

from megatron.core import mpu
from megatron.core.enums import ModelType
from megatron.training import get_args, pretrain, print_rank_0
from megatron.core.models.gpt import GPTModel


def model_provider(pre_process=True, post_process=True):
    args = get_args()
    print_rank_0("building GPT model ...")
    return GPTModel(config=args, transformer_layer_spec=None, vocab_size=args.padded_vocab_size,
                    max_sequence_length=args.max_position_embeddings, pre_process=pre_process,
                    post_process=post_process)


def forward_step(data_iterator, model):
    tokens, labels, loss_mask = next(data_iterator)
    output = model(tokens, labels=labels)
    return output, partial(torch.mean)


if __name__ == "__main__":
    pretrain(None, model_provider, ModelType.encoder_or_decoder, forward_step)
'''

job("megatron_gpt_tp8_pp4",
    "bash examples/pretrain_gpt_22b.sh",
    {"pretrain_gpt.py": PRETRAIN_GPT, "examples/pretrain_gpt_22b.sh": '''
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

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK \\
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

torchrun $DISTRIBUTED_ARGS pretrain_gpt.py \\
    "${GPT_ARGS[@]}" \\
    --data-path $DATA_PATH \\
    --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt \\
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH \\
    --log-interval 10 --eval-interval 1000 --eval-iters 10
'''},
    framework="megatron", model_family="gpt", params=22.1e9,
    parallelism={"data": "ddp", "tensor": 8, "pipeline": 4}, num_nodes=8, gpus_per_node=8, num_gpus=64,
    micro_batch_size=1, global_batch_size=512, grad_accum_steps=256, seq_len=2048, train_steps=100000,
    precision="bf16")

job("megatron_gpt_345m_one_node",
    "torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 "
    "--num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --max-position-embeddings 1024 "
    "--micro-batch-size 8 --global-batch-size 256 --lr 0.00015 --train-iters 500000 --lr-decay-iters 320000 "
    "--data-path my-gpt2_text_document --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt --fp16",
    {"pretrain_gpt.py": PRETRAIN_GPT},
    framework="megatron", model_family="gpt", params=355e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=8, num_gpus=8,
    micro_batch_size=8, global_batch_size=256, grad_accum_steps=4, seq_len=1024, train_steps=500000,
    precision="fp16")

job("megatron_moe_expert_parallel",
    "bash train_moe.sh",
    {"pretrain_gpt.py": PRETRAIN_GPT, "train_moe.sh": '''
#!/usr/bin/env bash
# Mixture-of-experts GPT: 8 experts, expert parallel 4, tensor parallel 2, two nodes.
NNODES=${NNODES:-2}
GPUS_PER_NODE=8
WORLD_SIZE=$((GPUS_PER_NODE * NNODES))

MOE_ARGS="--num-experts 8 --expert-model-parallel-size 4 --moe-router-topk 2 --moe-aux-loss-coeff 1e-2"
MODEL_ARGS="--num-layers 24 --hidden-size 2048 --ffn-hidden-size 8192 --num-attention-heads 16 \\
  --seq-length 4096 --max-position-embeddings 4096"
TRAIN_ARGS="--micro-batch-size 2 --global-batch-size 256 --train-iters 20000 --bf16 --use-distributed-optimizer"

torchrun --nnodes $NNODES --nproc_per_node $GPUS_PER_NODE --rdzv_backend c10d --rdzv_endpoint $MASTER_ADDR:29500 \\
  pretrain_gpt.py --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 \\
  $MOE_ARGS $MODEL_ARGS $TRAIN_ARGS --data-path /data/mix_text_document --tokenizer-type GPT2BPETokenizer
'''},
    framework="megatron", model_family="gpt", params=6.95e9,
    parallelism={"data": "ddp", "tensor": 2, "expert": 4}, num_nodes=2, gpus_per_node=8, num_gpus=16,
    micro_batch_size=2, global_batch_size=256, grad_accum_steps=16, seq_len=4096, train_steps=20000,
    precision="bf16")

PRETRAIN_BERT = PRETRAIN_GPT.replace("GPT (Megatron-LM style entry point)", "BERT (Megatron-LM style entry point)") \
    .replace("from megatron.core.models.gpt import GPTModel", "from megatron.core.models.bert import BertModel") \
    .replace("GPTModel(", "BertModel(").replace("building GPT model", "building BERT model")

job("megatron_bert_sbatch",
    "sbatch bert_large.slurm",
    {"pretrain_bert.py": PRETRAIN_BERT, "bert_large.slurm": '''
#!/bin/bash
#SBATCH --job-name=bert-large
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH --time=48:00:00
#SBATCH --exclusive

export MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export MASTER_PORT=6001

srun python pretrain_bert.py \\
    --tensor-model-parallel-size 2 \\
    --pipeline-model-parallel-size 1 \\
    --num-layers 24 --hidden-size 1024 --num-attention-heads 16 \\
    --seq-length 512 --max-position-embeddings 512 \\
    --micro-batch-size 4 --global-batch-size 1024 \\
    --train-iters 1000000 --lr 0.0001 --lr-warmup-fraction 0.01 \\
    --data-path /data/bert/wiki_text_sentence --vocab-file bert-large-uncased-vocab.txt \\
    --fp16
'''},
    framework="megatron", model_family="bert", params=340e6,
    parallelism={"data": "ddp", "tensor": 2}, num_nodes=4, gpus_per_node=8, num_gpus=32,
    micro_batch_size=4, global_batch_size=1024, grad_accum_steps=16, seq_len=512, train_steps=1000000,
    precision="fp16")
