"""A detector that accumulates toward a nominal batch (`self.accum = max(1, round(64 / self.batch_size))`)
steps its optimizer every that many batches: the global batch is the batch times that count."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

ENGINE = """
    import torch


    class Runner:
        def __init__(self, args):
            self.batch_size = args.batch_size
            self.model = torch.nn.Linear(4, 4).cuda()
            self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
            self.loader = torch.utils.data.DataLoader(list(range(2048)), batch_size=args.batch_size, shuffle=True)
            self.epochs = args.epochs

        def refresh(self, step, ramp):
            self.accum = max(1, round(48 / self.batch_size))
            if step <= ramp:
                self.accum = max(1, int(step / ramp * 48 / self.batch_size))

        def fit(self):
            for epoch in range(self.epochs):
                for step, batch in enumerate(self.loader):
                    self.refresh(step, 100)
                    self.model(batch.cuda()).sum().backward()
                    if step % self.accum == 0:
                        self.opt.step()
                        self.opt.zero_grad()
"""

ENTRY = """
    import argparse
    from engine import Runner

    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--epochs", type=int, default=120)
    args = p.parse_args()
    Runner(args).fit()
"""


def test_accumulation_toward_a_nominal_batch_multiplies_the_global_batch(tmp_path):
    make_job(tmp_path, {"engine.py": ENGINE, "fit.py": ENTRY})
    res = analyze_code(tmp_path, "python fit.py --batch-size 12", use_llm=False)
    assert res.value("micro_batch_size") == 12
    assert res.value("grad_accum_steps") == 4
    assert res.value("global_batch_size") == 48


def test_a_batch_above_the_nominal_one_accumulates_nothing(tmp_path):
    make_job(tmp_path, {"engine.py": ENGINE, "fit.py": ENTRY})
    res = analyze_code(tmp_path, "python fit.py --batch-size 96", use_llm=False)
    assert res.value("grad_accum_steps") == 1
    assert res.value("global_batch_size") == 96
