# config for training GPT-2 (124M) on 1 node of 8 GPUs
# 12 batch size * 1024 block size * 5 gradaccum * 8 GPUs = 491,520 tokens per iteration
batch_size = 12
block_size = 1024
gradient_accumulation_steps = 5 * 8
max_iters = 600000
eval_interval = 1000
weight_decay = 1e-1
