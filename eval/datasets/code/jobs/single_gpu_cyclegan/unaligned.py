import torch


class UnalignedDataset(torch.utils.data.Dataset):
    def __init__(self, root):
        self.root = root

    def __len__(self):
        return 1000

    def __getitem__(self, i):
        return torch.zeros(3, 256, 256), torch.zeros(3, 256, 256)
