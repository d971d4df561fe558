"""`Trainer(devices=<a helper's result>)`: the job sets the device count, but to a value no source gives, so the
GPU count stays open (null) instead of Lightning's default of one device."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

TRAIN = """
    import lightning.pytorch as pl
    from lightning.pytorch import Trainer
    from myproj.gpu_pool import claim_idle_gpus

    def main(n_wanted=3):
        trainer = Trainer(
            max_epochs=40,
            accelerator="gpu",
            strategy="ddp",
            devices={devices},
        )
        trainer.fit(build_module())

    if __name__ == "__main__":
        main()
"""


def test_devices_from_a_helper_leave_the_gpu_count_open(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.format(devices="claim_idle_gpus(n_wanted)")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts.get("num_gpus") is None or res.facts["num_gpus"].value is None
    assert res.facts["epochs"].value == 40


def test_devices_given_as_a_literal_count_still_count(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN.format(devices="2")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.facts["num_gpus"].value == 2
