import time

out_dir = "out-shakespeare"
eval_interval = 5
dataset = "shakespeare"
init_from = "gpt2-xl"  # this is the largest GPT-2 model
batch_size = 1
gradient_accumulation_steps = 32
max_iters = 20
learning_rate = 3e-5
