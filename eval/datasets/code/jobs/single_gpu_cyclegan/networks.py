import torch.nn as nn


class ResnetGenerator(nn.Module):
    def __init__(self, ngf=64, n_blocks=9):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, ngf, 7, padding=3), nn.InstanceNorm2d(ngf), nn.ReLU(True),
                                 nn.Conv2d(ngf, 3, 7, padding=3), nn.Tanh())

    def forward(self, x):
        return self.net(x)


class PatchDiscriminator(nn.Module):
    def __init__(self, ndf=64):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, ndf, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(ndf, 1, 4, 1, 1))

    def forward(self, x):
        return self.net(x)
