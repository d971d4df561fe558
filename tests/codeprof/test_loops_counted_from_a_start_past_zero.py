"""A loop `for i in range(start, N)` runs N - start times: a run length written as `N = 50000 + 1` and looped
from a resume counter bumped by one before the loop is 50,000 steps, not 50,001. Fixtures are written for
these tests, in the style of single-file neural-rendering trainers."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.loop_length import range_start_offsets

from .codeprof_support import make_job

TRAINER = """
    import torch
    from tqdm import trange

    def build(args):
        net = torch.nn.Linear(3, 4).cuda()
        first = 0
        if args.resume:
            first = torch.load(args.resume)["step"]
        return net, first

    def train(args):
        net, first = build(args)
        opt = torch.optim.Adam(net.parameters(), lr=5e-4)
        total_iters = 50000 + 1
        {bump}
        for it in {loop}(first, total_iters):
            loss = net(torch.rand(4096, 3).cuda()).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
"""


def test_a_step_count_looped_from_a_counter_bumped_by_one_runs_one_fewer_step(tmp_path):
    make_job(tmp_path, {"render_train.py": TRAINER.format(bump="first = first + 1", loop="trange")})
    prof = analyze_code(tmp_path, command="python render_train.py", use_llm=False)
    assert prof.value("train_steps") == 50000


def test_a_loop_from_a_counter_that_is_not_bumped_runs_the_whole_count(tmp_path):
    make_job(tmp_path, {"render_train.py": TRAINER.format(bump="", loop="range")})
    prof = analyze_code(tmp_path, command="python render_train.py", use_llm=False)
    assert prof.value("train_steps") == 50001


def test_a_literal_start_and_an_augmented_bump_are_both_skipped_counts():
    text = ("def a():\n    n_steps = 11\n    for i in range(1, n_steps):\n        pass\n"
            "def b():\n    s = 0\n    s += 2\n    for i in range(s, m_steps):\n        pass\n")
    assert range_start_offsets(text) == {"n_steps": 1, "m_steps": 2}


def test_a_name_whose_loops_start_at_different_points_is_left_alone():
    text = ("for i in range(1, n_steps):\n    pass\n"
            "for j in range(0, n_steps):\n    pass\n")
    assert range_start_offsets(text) == {}
