"""The entry script only calls a training function of another of the job's files (`run(args)`), and that function
builds the model it trains: the function is followed with the call's arguments, along the branches the run's
settings decide, up to the model's assignment. Fixtures are written for these tests; every expected count is worked
out by hand."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

LOOP = """
import torch
import torch.nn as nn

from .data import make_loader


class Net(nn.Module):
    def __init__(self, inputs, hidden, classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.head = nn.Linear(hidden, classes)


class Wrapper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.extra = nn.Linear(10, 10)


def run(args, log_every=10):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    loader = make_loader(args.data, args.batch_size)
    if args.deep:
        hidden = 2 * args.hidden
    else:
        hidden = args.hidden
    model = Net(args.inputs, hidden)
    model = model.to(device)
    optim = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            optim.zero_grad()
"""

TRAIN = """
import argparse

from trainkit.loop import run

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--inputs", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--deep", action="store_true")
    args = parser.parse_args()
    run(args)
"""


def _job(tmp_path: Path, loop: str = LOOP, train: str = TRAIN) -> Path:
    pkg = tmp_path / "trainkit"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "loop.py").write_text(loop)
    (pkg / "data.py").write_text("import numpy as np\n\ndef make_loader(path, bs):\n    return np.load(path)\n")
    (tmp_path / "train.py").write_text(train)
    return tmp_path


def _net(inputs: int, hidden: int) -> int:
    return inputs * hidden + hidden + hidden * hidden + hidden + hidden * 10 + 10


def test_the_model_a_called_training_function_builds_is_counted_with_the_runs_settings(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "python train.py --deep", use_llm=False)
    # hidden 32: Linear(20, 32) = 672, Linear(32, 32) = 1056, Linear(32, 10) = 330
    assert prof.facts["params"].value == _net(20, 32) == 672 + 1056 + 330


def test_the_branch_not_taken_does_not_size_the_model(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path), "python train.py --inputs 8", use_llm=False)
    # hidden 16: Linear(8, 16) = 144, Linear(16, 16) = 272, Linear(16, 10) = 170
    assert prof.facts["params"].value == _net(8, 16) == 144 + 272 + 170


def test_a_model_wrapped_in_another_module_later_in_the_function_leaves_the_size_unknown(tmp_path: Path) -> None:
    loop = LOOP.replace("    model = model.to(device)\n", "    model = Wrapper(model)\n")
    assert analyze_code(_job(tmp_path, loop=loop), "python train.py", use_llm=False).value("params") is None


def test_two_called_functions_building_different_models_leave_the_size_unknown(tmp_path: Path) -> None:
    loop = LOOP + "\n\ndef pretrain(args):\n    model = Net(args.inputs, 4 * args.hidden)\n"
    train = TRAIN.replace("from trainkit.loop import run", "from trainkit.loop import pretrain, run").replace(
        "    run(args)\n", "    pretrain(args)\n    run(args)\n")
    assert analyze_code(_job(tmp_path, loop=loop, train=train), "python train.py", use_llm=False).value("params") is None
