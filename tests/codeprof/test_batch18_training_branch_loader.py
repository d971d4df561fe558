"""A loader helper that builds the training loader under its `train` flag and a one-sample validation loader in
the else branch (`def build_loader(cfg, train): if train: ... else: DataLoader(..., batch_size=1)`): the training
branch's batch is the micro batch, even when a config section of the same name makes the flag look false. A
config written as several `---`-separated YAML documents is read as one mapping."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.configs import parse_config
from schedmate.codeprof.static.loader_batch import training_branch

from .codeprof_support import make_job

HELPER = """
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Clips(Dataset):
        def __init__(self, cfg, train):
            self.items = list(range(100 if train else 10))

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return torch.zeros(8)


    def build_loader(cfg, train):
        clips = Clips(cfg, train)
        if train:
            return DataLoader(dataset=clips, batch_size=cfg.optim.batch_size, shuffle=True, drop_last=True)
        else:
            return DataLoader(dataset=clips, batch_size=1, shuffle=False)
"""

ENTRY = """
    import argparse
    import yaml
    import torch
    from data.loaders import build_loader


    class Cfg(dict):
        __getattr__ = dict.get


    def read(path):
        out = {}
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                out.update(doc)
        return Cfg(out)


    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("-c", "--config", required=True)
        args = p.parse_args()
        cfg = read(args.config)
        model = torch.nn.Linear(8, 8).cuda()
        opt = torch.optim.Adam(model.parameters())
        train_loader = build_loader(cfg, True)
        val_loader = build_loader(cfg, False)
        for batch in train_loader:
            loss = model(batch.cuda()).sum()
            loss.backward()
            opt.step()
"""

CONFIG = """
    paths:
      train: ''
      valid: ''
    ---
    optim:
      batch_size: 24
      lr: 0.0002
    ---
    audio:
      rate: 16000
"""


def test_the_training_branch_of_a_loader_helper_gives_the_batch_not_its_validation_branch(tmp_path):
    make_job(tmp_path, {"train.py": ENTRY, "data/__init__.py": "", "data/loaders.py": HELPER,
                        "conf/base.yaml": CONFIG})
    res = analyze_code(tmp_path, "python train.py -c conf/base.yaml", use_llm=False)
    assert res.value("micro_batch_size") == 24
    assert res.value("global_batch_size") == 24


def test_a_helper_whose_training_batch_is_unread_leaves_the_batch_open_rather_than_the_validation_one(tmp_path):
    make_job(tmp_path, {"train.py": ENTRY, "data/__init__.py": "", "data/loaders.py": HELPER,
                        "conf/base.yaml": CONFIG.replace("batch_size: 24", "workers: 4")})
    res = analyze_code(tmp_path, "python train.py -c conf/base.yaml", use_llm=False)
    assert res.value("micro_batch_size") is None


def test_a_training_flags_else_branch_is_not_training_and_its_if_branch_is():
    assert training_branch({"when": ["train"]}) is True
    assert training_branch({"when": ["not (train)"]}) is False
    assert training_branch({"when": ["not (self.is_train)"]}) is False
    assert training_branch({"when": ["mode == 'train'"]}) is True
    assert training_branch({"when": ["not (not training)"]}) is True
    assert training_branch({"when": ["args.distributed"]}) is None


def test_a_yaml_stream_of_several_mappings_reads_as_one_mapping_later_keys_winning():
    text = "a: 1\nb: {c: 2}\n---\nb: {d: 3}\ne: 4\n"
    assert parse_config("x.yaml", text) == {"a": 1, "b": {"d": 3}, "e": 4}
