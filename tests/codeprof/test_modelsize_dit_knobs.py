"""Diffusion transformers sized from their knobs: a ViT's blocks plus adaptive-norm modulation, a timestep MLP and
a label table (published DiT sizes as checks)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.dit import dit_params
from tests.codeprof.codeprof_support import make_job


def test_the_published_dit_sizes_come_out_of_the_formula():
    assert abs(dit_params(2, 1152, 28) - 675e6) / 675e6 < 0.01  # DiT-XL/2
    assert abs(dit_params(2, 768, 12) - 130e6) / 130e6 < 0.01  # DiT-B/2
    assert abs(dit_params(2, 384, 12) - 33e6) / 33e6 < 0.01  # DiT-S/2


DIT_JOB = {
    "train_gen.py": """
        import argparse
        from flowlib.nets import DiT

        p = argparse.ArgumentParser()
        p.add_argument("--patch_size", type=int, default=4)
        p.add_argument("--hidden_size", type=int, default=256)
        p.add_argument("--depth", type=int, default=4)
        p.add_argument("--num_heads", type=int, default=4)
        p.add_argument("--batch_size", type=int, default=32)
        args = p.parse_args()

        net = DiT(patch_size=args.patch_size, hidden_size=args.hidden_size, depth=args.depth,
                  num_heads=args.num_heads, num_classes=10)
        for step in range(1000):
            pass
    """,
}


def test_knobs_of_a_job_that_builds_a_dit_are_sized_as_a_diffusion_transformer(tmp_path):
    make_job(tmp_path, DIT_JOB)
    cmd = "python train_gen.py --patch_size 8 --hidden_size 512 --depth 10 --num_heads 8"
    f = analyze_code(tmp_path, cmd, use_llm=False).facts
    want = dit_params(8, 512, 10, classes=1000)  # the flags carry no class count: ImageNet's 1000 assumed
    assert f["params"].value == want
    # the plain-ViT formula would have said about 2/3 of it (no modulation, no timestep MLP)
    assert want > 1.4 * 10 * 12 * 512 * 512
