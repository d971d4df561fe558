"""Which model an entry script trains when it picks one on a branch: a condition over a command-line value
wrapped in a string method (`args.arch.lower() == 'b'`) is settled by the interpreter, and the chosen class is
counted alone; when the condition stays open, two classes assigned to the same name on the two branches are
alternatives, never summed (the count stays null). Layers imported from their torch submodule
(`from torch.nn.modules.linear import Linear`) are torch's own layers."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

JOB = {
    "nets.py": """
        import torch.nn as nn
        from torch.nn.modules.linear import Linear

        class NetA(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = Linear(n, n)

        class NetB(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.fc = nn.Linear(n, 2 * n)
                self.out = nn.Linear(2 * n, n)

        def build_a(args):
            model = NetA(args.width)
            criterion = nn.MSELoss()
            return model, criterion

        def build_b(args):
            model = NetB(args.width)
            criterion = nn.MSELoss()
            return model, criterion
    """,
    "main.py": """
        import argparse
        from nets import build_a, build_b

        ap = argparse.ArgumentParser()
        ap.add_argument('--arch', '-a', type=str, required=True)
        ap.add_argument('--width', type=int, default=16)
        args = ap.parse_args()

        def main(args):
            if args.arch.lower() == 'a':
                model, criterion = build_a(args)
            elif args.arch.lower() == 'b':
                model, criterion = build_b(args)
            for epoch in range(2):
                pass

        main(args)
    """,
}


def test_a_string_method_condition_on_a_flag_picks_the_one_model_that_trains(tmp_path):
    make_job(tmp_path, JOB)
    f = analyze_code(tmp_path, "python main.py -a B", use_llm=False).facts
    assert f["params"].value == (16 * 32 + 32) + (32 * 16 + 16)
    f = analyze_code(tmp_path, "python main.py --arch a --width 8", use_llm=False).facts
    assert f["params"].value == 8 * 8 + 8


def test_two_models_on_the_branches_of_an_open_condition_are_not_summed(tmp_path):
    job = dict(JOB)
    job["main.py"] = str(JOB["main.py"]).replace("if args.arch.lower() == 'a':", "if input() == 'a':") \
        .replace("elif args.arch.lower() == 'b':", "else:")
    make_job(tmp_path, job)
    f = analyze_code(tmp_path, "python main.py -a b", use_llm=False).facts
    assert "params" not in f or f["params"].value is None
