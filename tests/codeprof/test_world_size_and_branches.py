"""The world size a distributed-setup helper returns, settings the entry script rewrites in one branch of an
`if`/`else`, and a running iteration count that is no gradient-accumulation knob."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import argparse
from lib import dist_utils
from lib.config import cfg, cfg_from_yaml_file


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cfg_file", type=str)
    p.add_argument("--batch_size", type=int, default=None)
    p.add_argument("--launcher", default="none")
    p.add_argument("--epochs", type=int, default=None)
    args = p.parse_args()
    cfg_from_yaml_file(args.cfg_file, cfg)
    if args.launcher == "none":
        n_gpus = 1
    else:
        n_gpus, local_rank = getattr(dist_utils, "setup_dist_%s" % args.launcher)(29500)
    if args.batch_size is None:
        args.batch_size = cfg.OPT.BATCH_SIZE_PER_GPU
    else:
        args.batch_size = args.batch_size // n_gpus
    args.epochs = cfg.OPT.EPOCHS if args.epochs is None else args.epochs
    done_iters = 0
    for epoch in range(args.epochs):
        done_iters = run_epoch(model, loader, done_iters=done_iters)


if __name__ == "__main__":
    main()
"""
FILES = {
    "tools/train.py": TRAIN,
    "tools/lib/__init__.py": "",
    "tools/lib/dist_utils.py": "def setup_dist_pytorch(port):\n    return 1, 0\n",
    "tools/lib/config.py": "cfg = {}\n\n\ndef cfg_from_yaml_file(path, into):\n    return into\n",
    "tools/lib/loop.py": """
def run_epoch(model, loader, accumulated_iter=0):
    for batch in loader:
        accumulated_iter += 1
    return accumulated_iter
""",
    "tools/cfg/net.yaml": "OPT:\n  BATCH_SIZE_PER_GPU: 6\n  EPOCHS: 30\n",
    "tools/run_dist.sh": "#!/bin/bash\nN=$1\nshift\npython -m torch.distributed.launch --nproc_per_node=$N train.py "
                         "--launcher pytorch \"$@\"\n",
}


def _job(tmp_path: Path) -> Path:
    return make_job(tmp_path, FILES)


def test_a_total_batch_divided_by_the_world_size_a_setup_helper_returns_is_the_per_gpu_batch(tmp_path):
    cmd = "cd tools && bash run_dist.sh 4 --cfg_file cfg/net.yaml --batch_size 24"
    f = analyze_code(_job(tmp_path), cmd, use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["micro_batch_size"].value == 6  # 24 // 4, divided once
    assert f["global_batch_size"].value == 24


def test_the_branch_not_taken_does_not_rewrite_a_setting_the_other_branch_filled(tmp_path):
    f = analyze_code(_job(tmp_path), "cd tools && bash run_dist.sh 4 --cfg_file cfg/net.yaml", use_llm=False).facts
    assert f["micro_batch_size"].value == 6  # the config's per-GPU batch, not divided by the world size
    assert f["epochs"].value == 30


def test_a_running_count_of_iterations_is_no_accumulation_setting(tmp_path):
    f = analyze_code(_job(tmp_path), "cd tools && bash run_dist.sh 4 --cfg_file cfg/net.yaml", use_llm=False).facts
    assert f["global_batch_size"].value == 24  # 6 per GPU x 4, nothing accumulates
