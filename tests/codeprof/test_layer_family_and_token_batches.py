"""Two things the static pass now settles itself instead of asking the LLM: a model family read from the
layers a job builds, and batches filled to a token budget (no sequence count exists to be asked for)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code, static_profile
from schedmate.codeprof.llm_checks import open_fields, token_budget


def _job(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


LSTM_SCRIPT = """import torch.nn as nn
model = nn.LSTM(512, 512, num_layers=3, batch_first=True)
head = nn.Linear(512, 10000)
"""

POLICY = """import torch.nn as nn
class ValueNet(nn.Module):
    def __init__(self, obs, act):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh())
        self.out = nn.Linear(128, act)
"""

CRNN = """import torch.nn as nn
class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 64, 3)
        self.rnn = nn.LSTM(64, 128, bidirectional=True)
"""


def test_a_bare_recurrent_layer_as_the_model_is_an_rnn(tmp_path):
    wd = _job(tmp_path, {"train.py": LSTM_SCRIPT})
    res, _ = static_profile(wd, command="python train.py")
    assert res.val("model_family") == "rnn"


def test_a_module_of_linear_layers_only_is_an_mlp(tmp_path):
    wd = _job(tmp_path, {"train.py": "from nets import ValueNet\nnet = ValueNet(8, 2)\n", "nets.py": POLICY})
    res, _ = static_profile(wd, command="python train.py")
    assert res.val("model_family") == "mlp"


def test_convolutions_beside_recurrent_layers_leave_the_family_open(tmp_path):
    wd = _job(tmp_path, {"train.py": "from model import Reader\nm = Reader()\n", "model.py": CRNN})
    res, wd_ = static_profile(wd, command="python train.py")
    assert res.val("model_family") is None
    assert "model_family" in open_fields(res, wd_)


def test_token_budget_batches_are_not_asked_of_the_llm_and_say_why_they_stay_null(tmp_path):
    wd = _job(tmp_path, {"train.py": "import sys\nprint(sys.argv)\n"})
    command = "torchrun --nproc_per_node=4 train.py data --arch lstm_lm --max-tokens 4096 --max-update 500"
    res, wd_ = static_profile(wd, command=command)
    assert not {"micro_batch_size", "global_batch_size"} & set(open_fields(res, wd_))
    warnings = analyze_code(wd, command=command, use_llm=False).warnings
    assert any(w.startswith("micro_batch_size: unknown: batches are filled to a token budget (--max-tokens 4096)")
               for w in warnings)


def test_a_batch_size_beside_a_token_budget_is_not_a_token_batched_job(tmp_path):
    wd = _job(tmp_path, {"train.py": "import sys\nprint(sys.argv)\n"})
    res, _ = static_profile(wd, command="python train.py --max-tokens 4096 --batch-size 16")
    assert token_budget(res) is None
    res, _ = static_profile(wd, command="python train.py --max-tokens 4096")
    assert token_budget(res) == ("--max-tokens", 4096)
