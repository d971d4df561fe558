"""An off-policy loop whose warm-up gate sets its updates per iteration in a local just before the update loop
(`if step >= warmup: n_upd = 1; for _ in range(n_upd): learner.update(...)`) runs that many updates per
iteration after the warm-up. Fixtures are written for these tests, in the style of pixel-based continuous
control research scripts."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

SCRIPT = """
    import argparse
    import torch

    def main():
        p = argparse.ArgumentParser()
        p.add_argument('--warmup', default=500, type=int)
        p.add_argument('--total_env_steps', default=20000, type=int)
        p.add_argument('--batch_size', default=64, type=int)
        args = p.parse_args()
        learner = Learner(torch.device('cuda'))
        for t in range(args.total_env_steps):
            act = learner.act(t)
            if t >= args.warmup:
                n_upd = {per}
                for _ in range(n_upd):
                    learner.update(memory, args.batch_size)

    if __name__ == '__main__':
        main()
"""


def test_a_local_update_count_set_inside_the_warmup_gate_is_the_updates_per_iteration(tmp_path):
    make_job(tmp_path, {"train_pixels.py": SCRIPT.format(per="1")})
    prof = analyze_code(tmp_path, command="python train_pixels.py", use_llm=False)
    assert prof.value("train_steps") == 19500


def test_two_updates_per_iteration_set_in_a_local_double_the_steps(tmp_path):
    make_job(tmp_path, {"train_pixels.py": SCRIPT.format(per="2")})
    prof = analyze_code(tmp_path, command="python train_pixels.py", use_llm=False)
    assert prof.value("train_steps") == 39000
