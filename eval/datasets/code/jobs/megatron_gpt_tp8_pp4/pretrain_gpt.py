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
