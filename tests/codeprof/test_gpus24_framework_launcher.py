"""A framework's own launcher that starts one worker per visible GPU when the job sees more than one
(`dist.launcher(worker)` beside `get_device_count("gpu")`): the count is set at submission, never 1."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    import argparse
    import megengine as mge
    import megengine.distributed as dist

    def worker(args):
        net = build(args.arch)
        for epoch in range(args.epochs):
            run_epoch(net, epoch)

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--arch", default="tinynet")
        parser.add_argument("--epochs", type=int, default=90)
        args = parser.parse_args()
        ndev = mge.device.get_device_count("gpu")
        if ndev > 1:
            dist.launcher(worker)(args)
        else:
            worker(args)
"""


def test_a_framework_launcher_over_the_visible_gpus_leaves_the_count_to_the_submission(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value is None
    assert any("launcher" in n and "visible GPU" in n for n in res.warnings)


def test_the_visible_devices_the_submitter_sets_give_the_count(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN})
    res = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2,3 python train.py", use_llm=False)
    assert res.facts["num_gpus"].value == 4


def test_a_launcher_given_its_own_gpu_count_is_not_read_as_every_gpu(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.replace("dist.launcher(worker)", "dist.launcher(worker, n_gpus=2)")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert not any("launcher" in n and "visible GPU" in n for n in res.warnings)
