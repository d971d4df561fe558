"""A transformer body whose config keeps a placeholder vocabulary (`vocab_size=1`: the model is fed
`inputs_embeds` built outside the config, as sequence recommenders do with their item tables) is not the
whole model: its size stays unknown rather than the body's few million weights."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

BODY_CONFIG = """
    import transformers


    def body_config(d_model, n_layer, n_head):
        return transformers.BertConfig(
            hidden_size=d_model,
            num_hidden_layers=n_layer,
            num_attention_heads=n_head,
            intermediate_size=d_model * 4,
            vocab_size=VOCAB,
        )
"""

TRAIN = """
    import argparse

    import torch

    from .body import body_config

    p = argparse.ArgumentParser()
    p.add_argument("--d_model", type=int, default=320)
    p.add_argument("--n_layer", type=int, default=3)
    p.add_argument("--batch", type=int, default=128)
    args = p.parse_args()
    cfg = body_config(args.d_model, args.n_layer, 4)
    item_table = torch.nn.Embedding(5_000_000, args.d_model)
    net = torch.nn.Linear(args.d_model, args.d_model).cuda()
    opt = torch.optim.Adam(net.parameters())
    for step in range(1000):
        loss = net(torch.randn(args.batch, args.d_model).cuda()).sum()
        loss.backward()
        opt.step()
"""


def _job(tmp_path, vocab: int):
    make_job(tmp_path, {
        "recs/__init__.py": "",
        "recs/body.py": BODY_CONFIG.replace("VOCAB", str(vocab)),
        "recs/train.py": TRAIN,
    })
    return analyze_code(tmp_path, "python -m recs.train", use_llm=False)


def test_a_body_fed_outside_embeddings_through_a_placeholder_vocabulary_has_no_size(tmp_path):
    res = _job(tmp_path, 1)
    assert res.value("micro_batch_size") == 128  # the job itself is read
    assert res.value("params") is None


def test_the_same_body_with_a_real_vocabulary_is_counted(tmp_path):
    res = _job(tmp_path, 32000)
    assert res.value("params") is not None and res.value("params") > 3 * 320 * 320 * 12
