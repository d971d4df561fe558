"""Two ways model code reaches a size: a local name the entry binds on the branch the command picks
(`cfg = small_cfg` under `if args.size == 'small':`, a dict of another module), and a torch layer's constructor
argument read back from the layer (`features[-1].out_channels`). Both are read as Python binds them; a name
assigned on two branches the run may take, or changed in place, leaves the count null."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

JOB = {
    "settings.py": """
        small_cfg = {'width': 32, 'classes': 5}
        large_cfg = {'width': 256, 'classes': 5}
    """,
    "net.py": """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self, width, classes):
                super().__init__()
                self.features = nn.Sequential(nn.Conv2d(3, width, 3), nn.ReLU(), nn.Conv2d(width, width, 3))
                self.head = nn.Linear(self.features[-1].out_channels, classes)

        def build_net(width, classes):
            return Net(width, classes)
    """,
    "train.py": """
        import argparse
        from settings import *
        from net import build_net

        ap = argparse.ArgumentParser()
        ap.add_argument('--size', default='small', choices=['small', 'large'])
        args = ap.parse_args()

        def main():
            if args.size == 'small':
                cfg = small_cfg
            elif args.size == 'large':
                cfg = large_cfg
            model = build_net(cfg['width'], cfg['classes'])
            for epoch in range(2):
                pass

        if __name__ == '__main__':
            main()
    """,
}


def _net(width: int, classes: int = 5) -> int:
    return (3 * width * 9 + width) + (width * width * 9 + width) + width * classes + classes


def test_a_name_bound_on_the_branch_the_command_picks_sizes_the_model(tmp_path):
    make_job(tmp_path, JOB)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["params"].value == _net(32)
    f = analyze_code(tmp_path, "python train.py --size large", use_llm=False).facts
    assert f["params"].value == _net(256)


def test_a_name_changed_in_place_after_its_assignment_leaves_the_count_null(tmp_path):
    job = dict(JOB)
    job["train.py"] = str(JOB["train.py"]).replace(
        "            model = build_net", "            cfg['width'] = int(input())\n            model = build_net")
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "params" not in f or f["params"].value is None


def test_a_name_assigned_on_branches_the_run_may_both_take_leaves_the_count_null(tmp_path):
    job = dict(JOB)
    job["train.py"] = str(JOB["train.py"]).replace("if args.size == 'small':", "if input() == 'small':") \
        .replace("elif args.size == 'large':", "else:")
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "params" not in f or f["params"].value is None


def test_parts_built_on_their_own_lines_and_wrapped_together_are_counted_once(tmp_path):
    job = dict(JOB)
    job["train.py"] = """
        import torch.nn as nn
        from net import build_net

        class Pair(nn.Module):
            def __init__(self, enc, dec):
                super().__init__()
                self.enc = enc
                self.dec = dec

        def main():
            net_enc = build_net(8, 4)
            net_dec = build_net(4, 2)
            pair = Pair(net_enc, net_dec)

        main()
    """
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "params" not in f or f["params"].value in (None, _net(8, 4) + _net(4, 2))
