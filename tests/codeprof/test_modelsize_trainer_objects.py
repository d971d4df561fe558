"""A trainer object created by the entry script from a class in another file builds the model, picked by a string
setting through its constructor's aliases (`self.arch = cfg.arch`)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

NETS = """
    import torch.nn as nn

    class SmallSeg(nn.Module):
        def __init__(self, cin=3, cout=1):
            super().__init__()
            self.enc = nn.Conv2d(cin, 16, 3, padding=1)
            self.dec = nn.Conv2d(16, cout, 1)

    class WideSeg(nn.Module):
        def __init__(self, cin=3, cout=1):
            super().__init__()
            self.enc = nn.Conv2d(cin, 64, 3, padding=1)
            self.mid = nn.Conv2d(64, 64, 3, padding=1)
            self.dec = nn.Conv2d(64, cout, 1)
"""
RUNNER = """
    import torch
    from nets import SmallSeg, WideSeg

    class Runner(object):
        def __init__(self, cfg, loader):
            self.arch = cfg.arch
            self.loader = loader
            self.loss_fn = torch.nn.BCELoss()
            self.build()

        def build(self):
            if self.arch == 'small':
                self.seg = SmallSeg(cin=3, cout=1)
            elif self.arch == 'wide':
                self.seg = WideSeg(cin=3, cout=1)
            self.opt = torch.optim.Adam(list(self.seg.parameters()), 1e-3)
"""
MAIN = """
    import argparse
    from runner import Runner

    def main(cfg):
        runner = Runner(cfg, None)
        runner.train()

    if __name__ == '__main__':
        p = argparse.ArgumentParser()
        p.add_argument('--arch', type=str, default='small')
        p.add_argument('--batch_size', type=int, default=2)
        main(p.parse_args())
"""
SMALL = (3 * 3 * 3 * 16 + 16) + (16 * 1 + 1)
WIDE = (3 * 3 * 3 * 64 + 64) + (3 * 3 * 64 * 64 + 64) + (64 * 1 + 1)


def test_the_runner_builds_the_class_the_command_picks(tmp_path):
    make_job(tmp_path, {"nets.py": NETS, "runner.py": RUNNER, "main.py": MAIN})
    assert analyze_code(tmp_path, "python main.py --arch wide", use_llm=False).facts["params"].value == WIDE
    assert analyze_code(tmp_path, "python main.py", use_llm=False).facts["params"].value == SMALL


def test_a_choice_the_command_does_not_settle_is_not_summed(tmp_path):
    runner = RUNNER.replace("self.arch = cfg.arch", "self.arch = pick_arch()")
    make_job(tmp_path, {"nets.py": NETS, "runner.py": runner, "main.py": MAIN})
    got = analyze_code(tmp_path, "python main.py --arch wide", use_llm=False).facts.get("params")
    assert got is None or got.value != SMALL + WIDE


SELF_OPTIMISING = {
    "agent.py": """
        import torch.nn as nn
        import torch.optim as optim

        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(6, 32)
                self.value = nn.Linear(32, 1)
                self.opt = optim.Adam(self.parameters(), lr=1e-3)
                self.sched = optim.lr_scheduler.StepLR(self.opt, 100)

        def main():
            critic = Critic()
            for episode in range(50):
                pass

        main()
    """,
}


def test_a_module_that_holds_its_own_optimizer_is_still_counted(tmp_path):
    make_job(tmp_path, SELF_OPTIMISING)
    f = analyze_code(tmp_path, "python agent.py", use_llm=False).facts
    assert f["params"].value == (6 * 32 + 32) + (32 + 1)
