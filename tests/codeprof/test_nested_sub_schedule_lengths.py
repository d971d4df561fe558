"""A settings dict that nests a sub-schedule's length under the run's (`{"train_epochs": 40, "swa": {"epochs":
8}}`): the run's key at the shallower level is the run length, the nested one is the sub-schedule's span and
is readable only by its full path. Fixtures are written for these tests, in the style of single-file speed-run
image classifiers."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.epoch_steps import shadowed_lengths

from .codeprof_support import make_job

SCRIPT = """
    import torch

    batch = 512
    hp = {{
        'opt': {{'lr': 0.2, 'momentum': 0.9}},
        'run': {{
            {run_key}: 40,
            'swa': {{'epochs': 8, 'decay': 0.99}},
        }},
    }}

    def main():
        net = torch.nn.Linear(10, 2).cuda()
        opt = torch.optim.SGD(net.parameters(), lr=hp['opt']['lr'])
        for epoch in range(hp['run'][{run_key}]):
            for x in torch.rand(100, batch, 10).cuda():
                opt.zero_grad()
                net(x).sum().backward()
                opt.step()

    main()
"""


def test_the_runs_train_epochs_beat_a_nested_sub_schedules_epochs(tmp_path):
    make_job(tmp_path, {"speedrun.py": SCRIPT.format(run_key="'train_epochs'")})
    prof = analyze_code(tmp_path, command="python speedrun.py", use_llm=False)
    assert prof.value("epochs") == 40


def test_a_nested_epochs_key_with_no_run_key_above_it_is_still_the_run_length(tmp_path):
    make_job(tmp_path, {"speedrun.py": SCRIPT.format(run_key="'warmup_frac'").replace("40", "0.1")
                        .replace("range(hp['run']['warmup_frac'])", "range(hp['run']['swa']['epochs'])")})
    prof = analyze_code(tmp_path, command="python speedrun.py", use_llm=False)
    assert prof.value("epochs") == 8


def test_only_length_leaves_under_a_shallower_run_key_are_shadowed():
    keys = ["c.max_steps", "c.ema.steps", "c.eval.batch_size", "c.sched.warmup_steps", "c.epochs", "c.a.b.epochs",
            "d.swa.iters"]
    assert shadowed_lengths(keys) == {"c.ema.steps", "c.a.b.epochs"}
