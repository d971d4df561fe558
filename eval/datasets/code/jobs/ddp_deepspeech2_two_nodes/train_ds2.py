"""DeepSpeech2-style speech recognition with DDP."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


class DeepSpeech2(nn.Module):
    def __init__(self, hidden=1024, layers=5, n_tokens=29):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 32, (41, 11), (2, 2)), nn.BatchNorm2d(32), nn.Hardtanh(0, 20))
        self.rnn = nn.LSTM(32 * 41, hidden, num_layers=layers, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, n_tokens)

    def forward(self, x):
        x = self.conv(x.unsqueeze(1))
        b, c, f, t = x.shape
        out, _ = self.rnn(x.view(b, c * f, t).transpose(1, 2))
        return self.fc(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--manifest", default="manifests/librispeech_train.csv")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=70)
    ap.add_argument("--hidden-size", type=int, default=1024)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DistributedDataParallel(DeepSpeech2(hidden=args.hidden_size).cuda(), device_ids=[local_rank])
    from audio_data import SpectrogramDataset
    ds = SpectrogramDataset(args.manifest)
    train_loader = torch.utils.data.DataLoader(ds, batch_size=args.batch_size,
                                               sampler=torch.utils.data.DistributedSampler(ds))
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1.5e-4)
    for epoch in range(args.epochs):
        for spect, targets, in_len, tgt_len in train_loader:
            logits = model(spect.cuda()).log_softmax(-1).transpose(0, 1)
            loss = ctc(logits, targets, in_len, tgt_len)
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
