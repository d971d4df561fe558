"""A search script that overwrites a parsed option with a random draw (`epoch = random.choice([...]);
config.num_epochs = epoch`) leaves the field open; an option only read is kept."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

SEARCH = """
import argparse
import random


def main(config):
    lr = random.random() * 1e-3
    epochs = random.choice([20, 40, 80])
    config.n_epochs = epochs
    config.lr = lr
    run(config)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_epochs", type=int, default=20)
    parser.add_argument("--batch_size", type=int, default=6)
    parser.add_argument("--lr", type=float, default=1e-4)
    main(parser.parse_args())
"""


def test_the_drawn_epochs_are_open_and_the_batch_is_kept(tmp_path: Path) -> None:
    make_job(tmp_path, {"main.py": SEARCH})
    prof = analyze_code(tmp_path, command="python main.py", use_llm=False)
    assert prof.value("epochs") is None
    assert any(w.startswith("epochs: 20 dropped") and "random draw" in w for w in prof.warnings)
    assert prof.value("micro_batch_size") == 6


def test_without_the_draw_the_epochs_are_read(tmp_path: Path) -> None:
    make_job(tmp_path, {"main.py": SEARCH.replace("random.choice([20, 40, 80])", "config.n_epochs")})
    assert analyze_code(tmp_path, command="python main.py", use_llm=False).value("epochs") == 20
