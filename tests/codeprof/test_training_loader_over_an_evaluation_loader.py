"""The batch is the training loader's: a loader bound to an evaluation name is passed over, and torch's
`DataLoader(dataset, 48)` gives its batch as the second positional argument."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.loader_batch import assigned_to_evaluation, loader_batch_expr

from .codeprof_support import make_job

TRAIN = """
    import torch
    from torch.utils.data import DataLoader

    BATCH = 48

    def fit():
        net = torch.nn.Linear(4, 4).cuda()
        opt = torch.optim.Adam(net.parameters())
        rows = list(range(100))
        check_loader = DataLoader(rows, batch_size=1, shuffle=False)
        for epoch in range(1, 21):
            loader = DataLoader(rows, BATCH, shuffle=True)
            for x in loader:
                opt.zero_grad()
                net(x).sum().backward()
                opt.step()

    if __name__ == "__main__":
        fit()
"""


def test_the_training_loaders_positional_batch_wins_over_an_evaluation_loaders_keyword(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("check_loader", "test_loader")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 48
    assert f["epochs"].value == 20


def test_a_loader_bound_to_an_evaluation_name_is_recognised_on_its_line():
    summary = {"assigns": [{"target": "self.valLoader", "expr": "DataLoader(ds, batch_size=1)", "line": 7},
                           {"target": "loader", "expr": "DataLoader(ds, 8)", "line": 9}]}
    assert assigned_to_evaluation(summary, {"func": "DataLoader", "line": 7})
    assert not assigned_to_evaluation(summary, {"func": "DataLoader", "line": 9})


def test_a_second_positional_argument_is_a_batch_only_for_torchs_loader():
    torch_summary = {"imports": ["torch.utils.data", "torch.utils.data.DataLoader"]}
    call = {"func": "DataLoader", "args": ["ds", "64"], "kwargs": {}}
    assert loader_batch_expr(call, torch_summary) == "64"
    assert loader_batch_expr(call, {"imports": ["paddle.io", "paddle.io.DataLoader"]}) is None
    assert loader_batch_expr({**call, "kwargs": {"batch_size": "8"}}, torch_summary) == "8"
