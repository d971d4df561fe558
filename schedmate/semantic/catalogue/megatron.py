"""Megatron-LM style templates: a bash launcher over `torchrun` and a GPT or BERT entry point."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub

_MEGATRON_ENTRY = '''"""<<what>> pre-training entry point (Megatron-LM style)."""
from functools import partial

import torch

from megatron.core.enums import ModelType
from megatron.training import get_args, pretrain, print_rank_0
from megatron.core.models.<<mod>> import <<cls>>


def model_provider(pre_process=True, post_process=True):
    args = get_args()
    print_rank_0("building <<what>> model ...")
    return <<cls>>(config=args, transformer_layer_spec=None, vocab_size=args.padded_vocab_size,
                   max_sequence_length=args.max_position_embeddings, pre_process=pre_process,
                   post_process=post_process)


def forward_step(data_iterator, model):
    tokens, labels, loss_mask = next(data_iterator)
    output = model(tokens, labels=labels)
    return output, partial(torch.mean)


if __name__ == "__main__":
    pretrain(None, model_provider, ModelType.encoder_or_decoder, forward_step)
'''

_MEGATRON_SH = '''#!/bin/bash
# <<desc>>
set -euo pipefail
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS_PER_NODE=<<gpn>>
NNODES=<<nodes>>
NODE_RANK=${NODE_RANK:-0}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=6000
DATA_PATH=<<data>>
CHECKPOINT_PATH=/ckpt/<<run>>

DISTRIBUTED_ARGS="--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK \\
    --master_addr $MASTER_ADDR --master_port $MASTER_PORT"

MODEL_ARGS=(
    --tensor-model-parallel-size <<tp>>
    --pipeline-model-parallel-size <<pp>>
    --num-layers <<layers>>
    --hidden-size <<hidden>>
    --num-attention-heads <<heads>>
    --seq-length <<seq>>
    --max-position-embeddings <<seq>>
    --micro-batch-size <<mbs>>
    --global-batch-size <<gbs>>
    --lr <<lr>>
    --train-iters <<steps>>
    --lr-decay-style cosine
    --bf16
)

torchrun $DISTRIBUTED_ARGS <<entry>> \\
    "${MODEL_ARGS[@]}" \\
    --data-path $DATA_PATH <<tok>> \\
    --save $CHECKPOINT_PATH --load $CHECKPOINT_PATH \\
    --log-interval <<log>> --save-interval <<ckpt>> --eval-interval <<eval>> --eval-iters 10
'''


def _megatron(layers: int, hidden: int, heads: int, bert: bool = False, desc: str = "") -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        entry = "pretrain_bert.py" if bert else "pretrain_gpt.py"
        tok = ("--vocab-file bert-large-uncased-vocab.txt" if bert
               else "--vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt")
        sh = _sub(_MEGATRON_SH, desc=desc or f"{layers}-layer model on {p.num_gpus} GPUs (TP={p.tp}, PP={p.pp})",
                  gpn=p.gpus_per_node, nodes=p.nodes, data="/data/wiki/wiki_text_sentence" if bert
                  else "/data/pile/pile_text_document", run=f"run{p.seed % 1000}", tp=p.tp, pp=p.pp,
                  layers=layers, hidden=hidden, heads=heads, seq=p.seq_len, mbs=p.micro_batch, gbs=p.global_batch,
                  lr=f"{p.lr:.1e}", steps=p.steps, entry=entry, tok=tok, log=p.log_every,
                  ckpt=p.ckpt_every or 1000, eval=p.eval_every or 1000)
        what = "BERT" if bert else "GPT"
        py = _sub(_MEGATRON_ENTRY, what=what, mod="bert" if bert else "gpt", cls="BertModel" if bert else "GPTModel")
        return {"examples/train.sh": sh, entry: py, "command.txt": "bash examples/train.sh\n"}
    return render


def _megatron_fits(tp: int, pp: int) -> Callable[[int], bool]:
    def fits(g: int) -> bool:
        if g < tp * pp or g % (tp * pp):
            return False
        return g <= 8 or g % 8 == 0
    return fits
