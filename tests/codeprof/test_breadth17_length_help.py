"""A step option documented as the model's inner iterations is not the run length (codeprof/static/length_help.py)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

_SCRIPT = '''import argparse
import torch

parser = argparse.ArgumentParser()
parser.add_argument('--corpus', default='toyshop', help='which session corpus')
parser.add_argument('--batchSize', type=int, default=64, help='sessions per batch')
parser.add_argument('--epoch', type=int, default={epochs}, help='how many epochs to train for')
parser.add_argument('--step', type=int, default=2, help='{step_help}')
opt = parser.parse_args()


def main():
    model = torch.nn.Linear(8, 8).cuda()
    for epoch in range(opt.epoch):
        for batch in range(10):
            pass


if __name__ == '__main__':
    main()
'''


def _job(tmp_path: Path, step_help: str, epochs: int = 12) -> Path:
    (tmp_path / "run.py").write_text(_SCRIPT.format(step_help=step_help, epochs=epochs))
    return tmp_path


def test_a_graph_propagation_step_option_is_not_the_run_length_and_the_epoch_option_is(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "graph propagation rounds per layer"), "python run.py --epoch 7",
                        use_llm=False)
    assert prof.facts.get("train_steps") is None or prof.facts["train_steps"].value is None
    assert prof.facts["epochs"].value == 7  # the command line beats the default 12
    assert any("iteration inside the model" in w for w in prof.warnings)


def test_a_step_option_documented_as_training_steps_still_counts(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "total optimizer steps to train"), "python run.py", use_llm=False)
    assert prof.facts["train_steps"].value == 2
    assert not any("iteration inside the model" in w for w in prof.warnings)


def test_the_misspelled_propogation_help_is_still_read_as_inner_iterations(tmp_path: Path) -> None:
    prof = analyze_code(_job(tmp_path, "gnn propogation steps", epochs=40), "python run.py", use_llm=False)
    assert (prof.facts.get("train_steps") is None or prof.facts["train_steps"].value is None)
    assert prof.facts["epochs"].value == 40
