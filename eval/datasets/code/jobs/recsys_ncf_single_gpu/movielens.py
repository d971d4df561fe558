import torch


class RatingsDataset(torch.utils.data.Dataset):
    n_users, n_items = 138493, 26744

    def __init__(self, root):
        self.root = root

    def __len__(self):
        return 20_000_263

    def __getitem__(self, i):
        return 0, 0, 1.0
