"""Which settings give the training run's length: not those of evaluation, sampling or rollouts, not a
schedule's horizon beside a Trainer's explicit epochs; batches per epoch times epochs are steps."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_an_environment_runners_max_steps_is_not_the_training_length(tmp_path):
    write(tmp_path, {
        "train.py": "import hydra\nimport torch\n\n\n@hydra.main(config_path='.', config_name='run')\n"
                    "def main(cfg):\n    model.cuda()\n\n\nmain()\n",
        "run.yaml": "task:\n  env_runner:\n    max_steps: 300\n    n_envs: 4\n"
                    "training:\n  num_epochs: 50\n  device: cuda:0\ndataloader:\n  batch_size: 64\n",
    })
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f.get("train_steps") is None and f["epochs"].value == 50


def test_an_option_documented_as_a_generation_knob_is_not_the_step_count(tmp_path):
    write(tmp_path, {"main.py": (
        "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
        "p.add_argument('--epochs', default=400, type=int)\n"
        "p.add_argument('--num_iter', default=64, type=int, help='number of autoregressive iterations to "
        "generate an image')\nargs = p.parse_args()\nmodel.cuda()\n")})
    f = analyze_code(tmp_path, "python main.py", use_llm=False).facts
    assert f.get("train_steps") is None and f["epochs"].value == 400


def test_a_trainers_explicit_epochs_win_over_a_models_schedule_horizon(tmp_path):
    write(tmp_path, {
        "train.py": "from pytorch_lightning.cli import LightningCLI\n\nLightningCLI(Model, DataModule)\n",
        "cfg.yaml": "trainer:\n  max_epochs: 10\n  devices: 1\nmodel:\n  warmup_steps: 1000\n  max_steps: 200000\n",
    })
    f = analyze_code(tmp_path, "python train.py --config cfg.yaml --trainer.max_epochs=100", use_llm=False).facts
    assert f.get("train_steps") is None and f["epochs"].value == 100


def test_batches_per_epoch_times_epochs_are_the_steps(tmp_path):
    write(tmp_path, {
        "train.py": "import hydra\nimport torch\n\n\n@hydra.main(config_path='conf', config_name='default')\n"
                    "def main(cfg):\n    model.cuda()\n\n\nmain()\n",
        "conf/default.yaml": "trainer:\n  max_epochs: 1_000\ntrain_dataloader:\n  batch_size: 128\n"
                             "  num_batches_per_epoch: 100\n",
    })
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["train_steps"].value == 100_000


def test_lightnings_fast_dev_run_is_that_many_training_batches_and_no_epochs(tmp_path):
    write(tmp_path, {"train.py": (
        "import argparse\nimport pytorch_lightning as pl\np = argparse.ArgumentParser()\n"
        "p.add_argument('--fast_dev_run', default=1, type=int)\np.add_argument('--max_epochs', default=100, type=int)\n"
        "args = p.parse_args()\ntrainer = pl.Trainer(max_epochs=args.max_epochs, fast_dev_run=args.fast_dev_run,"
        " accelerator='gpu', devices=1)\ntrainer.fit(model)\n")})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["train_steps"].value == 1 and f.get("epochs") is None
    f = analyze_code(tmp_path, "python train.py --fast_dev_run 0", use_llm=False).facts
    assert f.get("train_steps") is None and f["epochs"].value == 100
