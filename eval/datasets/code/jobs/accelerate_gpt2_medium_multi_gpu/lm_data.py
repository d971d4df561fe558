import torch


def load_blocks(path, seq_len):
    return torch.randint(0, 50257, (2048, seq_len))
