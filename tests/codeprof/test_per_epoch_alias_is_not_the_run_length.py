"""A training function that copies the per-epoch step setting into a local (`n_iters = args.iters_per_epoch`)
runs one epoch's steps per call: the local is not the run's length; the run is the per-epoch steps times the
epochs. Fixtures are written for these tests, in the style of graph-classification research scripts."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

SCRIPT = """
    import argparse
    import torch

    def train_one(args, model, opt, graphs):
        total_iters = args.{source}
        for _ in range(total_iters):
            idx = torch.randint(0, len(graphs), (args.batch_size,))
            loss = model(graphs, idx).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()

    def main():
        p = argparse.ArgumentParser()
        p.add_argument('--batch_size', type=int, default=16)
        p.add_argument('--iters_per_epoch', type=int, default=40)
        p.add_argument('--epochs', type=int, default=120)
        args = p.parse_args()
        model = GraphNet().cuda()
        opt = torch.optim.Adam(model.parameters())
        for epoch in range(1, args.epochs + 1):
            train_one(args, model, opt, graphs)

    main()
"""


def test_a_local_copied_from_the_per_epoch_steps_is_not_the_run_length(tmp_path):
    make_job(tmp_path, {"main.py": SCRIPT.format(source="iters_per_epoch")})
    prof = analyze_code(tmp_path, command="python main.py", use_llm=False)
    assert prof.value("train_steps") == 40 * 120
