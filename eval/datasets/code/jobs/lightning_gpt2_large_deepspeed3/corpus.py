import torch


class TokenBlocks(torch.utils.data.Dataset):
    def __init__(self, path, block):
        self.block = block

    def __len__(self):
        return 10 ** 6

    def __getitem__(self, i):
        return torch.zeros(self.block, dtype=torch.long)
