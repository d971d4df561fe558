import torch


class FlowersDataset(torch.utils.data.Dataset):
    def __init__(self, res):
        self.res = res

    def __len__(self):
        return 8189

    def __getitem__(self, i):
        return torch.zeros(3, self.res, self.res)
