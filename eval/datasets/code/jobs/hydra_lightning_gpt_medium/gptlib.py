import lightning as L
import torch
from torch import nn


class GPTModule(L.LightningModule):
    def __init__(self, n_layer, n_embd, vocab_size, lr):
        super().__init__()
        layer = nn.TransformerEncoderLayer(n_embd, n_embd // 64, 4 * n_embd, batch_first=True)
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.body = nn.TransformerEncoder(layer, n_layer)
        self.head = nn.Linear(n_embd, vocab_size)
        self.lr = lr

    def training_step(self, batch, _):
        logits = self.head(self.body(self.emb(batch[:, :-1]), is_causal=True))
        return nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=self.lr)


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, seq_len):
        self.seq_len = seq_len

    def __len__(self):
        return 100000

    def __getitem__(self, i):
        return torch.randint(0, 50257, (self.seq_len + 1,))
