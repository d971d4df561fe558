"""Options kept as the class attributes of a plain config class and read through its instance
(`class Config: epoch = 14`, `opt = Config()`, `for epoch in range(opt.epoch)`): they are code defaults;
a class named for evaluation is not the training run's."""

from __future__ import annotations

import re

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.class_attributes import class_attribute_defaults
from tests.codeprof.codeprof_support import make_job

SETTINGS = """
    class Settings:
        data_root = '/data/parcels'
        lr = 2e-3
        rounds = 9
        batch_size = 6

        def update(self, **kw):
            for k, v in kw.items():
                setattr(self, k, v)

    class EvalSettings:
        batch_size = 64

    opt = Settings()
"""

TRAIN = """
    import torch
    from tools.settings import opt

    def train():
        loader = torch.utils.data.DataLoader(ParcelSet(opt.data_root), batch_size=opt.batch_size, shuffle=True)
        model = ParcelNet().cuda()
        for epoch in range(opt.rounds):
            for images, targets in loader:
                step(model, images, targets)

    if __name__ == '__main__':
        train()
"""


def value(facts: dict, field: str) -> object:
    return facts[field].value if field in facts else None


def test_the_attributes_of_an_instantiated_config_class_are_the_runs_defaults(tmp_path):
    make_job(tmp_path, {"tools/__init__.py": "", "tools/settings.py": SETTINGS, "train.py": TRAIN})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert value(f, "epochs") == 9
    assert value(f, "micro_batch_size") == 6  # not the evaluation class's 64


def test_only_constant_attributes_of_config_classes_are_read():
    text = """
class Helper:
    size = 3
class Options:
    epochs = 5
    _private = 1
    name: str = 'run'
    steps = compute()
"""
    got = list(class_attribute_defaults(text, re.compile(r"Options$")))
    assert [(k, v) for k, v, _ in got] == [("epochs", 5), ("name", "run")]  # Helper is never instantiated
