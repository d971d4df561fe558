import numpy as np
import torch


class PackedTokenDataset(torch.utils.data.Dataset):
    """Fixed-length windows over a memory-mapped uint16 token file."""

    def __init__(self, path, seq_len):
        self.tokens = np.memmap(path + "/train.bin", dtype=np.uint16, mode="r")
        self.seq_len = seq_len

    def __len__(self):
        return len(self.tokens) // self.seq_len - 1

    def __getitem__(self, i):
        s = i * self.seq_len
        return torch.from_numpy(self.tokens[s:s + self.seq_len].astype(np.int64))
