"""`from hparams import *` at any depth: a script's bare names come from the module it star-imports, which
may star-import a base module in turn; constants multiply across modules, and the script's own constants
win over imported ones. Fixtures are written for these tests (a toy speaker-embedding trainer)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.star_imports import star_constants

from .codeprof_support import make_job

BASE = """
    voices_per_batch = 24
    clips_per_voice = 5
    total_updates = 90000
"""

HPARAMS = """
    from toyspk.base_hparams import *

    learning_rate = 1e-4
    batch_size = voices_per_batch * clips_per_voice
"""

TRAIN = """
    import torch
    from toyspk.hparams import *

    {extra}
    model = SpeakerNet().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=learning_rate)
    loader = torch.utils.data.DataLoader(clips, batch_size=batch_size, shuffle=True)
    step = 0
    while step < total_updates:
        for x in loader:
            loss = model(x)
            loss.backward()
            opt.step()
            step += 1
"""


def _job(tmp_path, extra: str = ""):
    return make_job(tmp_path, {
        "toyspk/__init__.py": "",
        "toyspk/base_hparams.py": BASE,
        "toyspk/hparams.py": HPARAMS,
        "train.py": TRAIN.format(extra=extra),
    })


def test_a_constant_two_star_imports_deep_multiplies_into_the_batch(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 120


def test_the_scripts_own_constant_wins_over_the_star_imported_one(tmp_path):
    prof = analyze_code(_job(tmp_path, extra="batch_size = 48"), command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 48


def test_star_constants_follow_the_chain_in_import_order(tmp_path):
    job = _job(tmp_path)

    def read(rel: str) -> str | None:
        p = job / rel
        return p.read_text() if p.exists() else None

    def find(module: str, base: str) -> str | None:
        rel = module.replace(".", "/") + ".py"
        return rel if (job / rel).exists() else None

    got = {name: (v, where) for name, v, where in star_constants("train.py", read, find)}
    assert got["batch_size"][0] == 120
    assert got["voices_per_batch"] == (24, "toyspk/base_hparams.py:1")
    assert got["learning_rate"][1] == "toyspk/hparams.py:3"


def test_a_star_import_of_a_module_outside_the_workdir_brings_nothing(tmp_path):
    make_job(tmp_path, {"train.py": "from torch.nn import *\nbatch_size = 8\n"})

    def read(rel: str) -> str | None:
        p = tmp_path / rel
        return p.read_text() if p.exists() else None

    assert star_constants("train.py", read, lambda m, b: None) == []
