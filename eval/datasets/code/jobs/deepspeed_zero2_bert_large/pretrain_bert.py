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
