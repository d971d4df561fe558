import torch.nn as nn


class DecoderLM(nn.Module):
    def __init__(self, n_layers, d_model, n_heads, vocab):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, batch_first=True, norm_first=True)
        self.body = nn.TransformerEncoder(layer, n_layers)
        self.out = nn.Linear(d_model, vocab, bias=False)

    def forward(self, x, y):
        h = self.body(self.emb(x), is_causal=True)
        return nn.functional.cross_entropy(self.out(h).flatten(0, 1), y.flatten())
