"""A model that builds its transformer from timm's named blocks (`PatchEmbed`, `Attention`, `Mlp`) is counted: each
block is sized from its published layout in torch layers (a patch convolution, a qkv and a projection linear, two
linears), with the constructor's arguments and timm's defaults, and `patch_embed.num_patches` is readable the way
model code reads it for its position table."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

JOB = {
    "tiny_vit.py": """
        import torch
        import torch.nn as nn
        from timm.models.vision_transformer import PatchEmbed, Attention, Mlp

        class Block(nn.Module):
            def __init__(self, dim, heads, ratio=4.0):
                super().__init__()
                self.norm1 = nn.LayerNorm(dim)
                self.attn = Attention(dim, num_heads=heads, qkv_bias=True)
                self.norm2 = nn.LayerNorm(dim)
                self.mlp = Mlp(in_features=dim, hidden_features=int(dim * ratio), act_layer=nn.GELU)

        class TinyViT(nn.Module):
            def __init__(self, img=32, patch=4, dim=64, depth=2, heads=4, classes=10):
                super().__init__()
                self.patch_embed = PatchEmbed(img, patch, 3, dim)
                n = self.patch_embed.num_patches
                self.pos_embed = nn.Parameter(torch.zeros(1, n, dim))
                self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
                self.head = nn.Linear(dim, classes)
    """,
    "train.py": """
        from tiny_vit import TinyViT

        model = TinyViT(dim=64, depth=3)
        for epoch in range(2):
            pass
    """,
}


def _expected(img: int = 32, patch: int = 4, dim: int = 64, depth: int = 3, classes: int = 10) -> int:
    embed = 3 * dim * patch * patch + dim
    pos = (img // patch) ** 2 * dim
    attn = dim * 3 * dim + 3 * dim + dim * dim + dim
    mlp = dim * 4 * dim + 4 * dim + 4 * dim * dim + dim
    block = 2 * 2 * dim + attn + mlp
    return embed + pos + depth * block + dim * classes + classes


def test_a_vit_built_from_timms_named_blocks_is_counted_from_their_published_layout(tmp_path):
    make_job(tmp_path, JOB)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == _expected()


def test_a_timm_block_with_a_size_the_job_leaves_open_leaves_the_count_null(tmp_path):
    job = dict(JOB)
    job["train.py"] = """
        import os
        from tiny_vit import TinyViT

        model = TinyViT(dim=int(os.environ['WIDTH']))
    """
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "params" not in f or f["params"].value is None
