"""A multi-task config listing its tasks: when exactly one listed task trains, its loader settings are the run's;
with two training tasks the list gives nothing."""

from __future__ import annotations

from textwrap import dedent, indent

import yaml

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.task_lists import single_training_task

from .codeprof_support import make_job

CONFIG = """
    SOLVER:
      MAX_ITER: 50000
    TASKS:
      - NAME: caption_eval
        DATALOADER:
          TEST_BATCH_SIZE: 64
      - NAME: scene_cls
        DATASETS:
          TRAIN: SceneSet
        DATALOADER:
          TRAIN_BATCH_SIZE: 24
          NUM_WORKERS: 6
"""

SECOND_TRAINER = """
      - NAME: depth_reg
        DATALOADER:
          TRAIN_BATCH_SIZE: 12
"""

TRAIN = """
    import argparse
    import torch
    import yaml

    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--config-file")
        args = p.parse_args()
        cfg = load_cfg(args.config_file)
        for task in cfg.TASKS:
            loader = torch.utils.data.DataLoader(build(task), batch_size=task.DATALOADER.TRAIN_BATCH_SIZE)
        for it in range(cfg.SOLVER.MAX_ITER):
            step(next(loader))

    if __name__ == "__main__":
        main()
"""


def test_the_one_training_task_of_a_task_list_is_found():
    key, task = single_training_task(yaml.safe_load(dedent(CONFIG)))
    assert key == "TASKS" and task["NAME"] == "scene_cls"


def test_two_training_tasks_leave_the_list_unread():
    assert single_training_task(yaml.safe_load(dedent(CONFIG) + indent(dedent(SECOND_TRAINER), "  "))) is None


def test_the_training_tasks_batch_is_the_jobs_micro_batch(tmp_path):
    make_job(tmp_path, {"train.py": TRAIN, "configs/scene.yaml": CONFIG})
    res = analyze_code(tmp_path, "python train.py --config-file configs/scene.yaml", use_llm=False)
    assert res.facts["micro_batch_size"].value == 24
    assert res.facts["train_steps"].value == 50000
