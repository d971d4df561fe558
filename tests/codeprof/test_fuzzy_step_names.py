"""A step budget read from a setting's name when no listed name fits (`static/names.py`, FUZZY/LOOKALIKE)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
import hydra

@hydra.main(config_path=".", config_name="config")
def main(cfg):
    for step in range(10**9):
        pass

if __name__ == "__main__":
    main()
"""


def _steps(root: Path, config: str) -> object:
    make_job(root, {"config.yaml": config, "train.py": TRAIN})
    fact = analyze_code(root, "python train.py", use_llm=False).facts.get("train_steps")
    return None if fact is None else fact.value


def test_an_rl_n_step_return_length_is_not_a_step_budget(tmp_path: Path) -> None:
    assert _steps(tmp_path, "lr: 0.0003\nnstep: 3\nbatch_size: 256\n") is None


def test_a_budget_named_like_steps_beside_it_is_still_read(tmp_path: Path) -> None:
    assert _steps(tmp_path, "lr: 0.0003\nnstep: 3\nn_iters: 50000\nbatch_size: 256\n") == 50000
