"""Hydra composition without running Hydra: defaults lists, group choices, overrides, packages, resolvers."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.hydra_compose import compose, safe_eval

CONFIGS = {
    "configs/config.yaml": "defaults:\n  - _self_\n  - trainer: default\n  - model: null\n  - experiment: null\n"
                           "seed: 1\n",
    "configs/trainer/default.yaml": "devices: 1\nmax_epochs: 1000\naccumulate_grad_batches: 1\n",
    "configs/model/gpt2.yaml": "defaults:\n  - gpt2model: gpt2-small\nname: gpt2\n",
    "configs/model/gpt2model/gpt2-small.yaml": "# @package model.config\nn_layer: 12\nn_embd: 768\n",
    "configs/model/gpt2model/gpt2-medium.yaml": "# @package model.config\nn_layer: 24\nn_embd: 1024\n",
    "configs/experiment/owt/base.yaml": "# @package _global_\ndefaults:\n  - override /model: null\n"
                                        "trainer:\n  max_steps: 400000\n  accumulate_grad_batches: "
                                        "${div_up:${train.global_batch_size}, ${eval:${trainer.devices} * "
                                        "${datamodule.batch_size}}}\ntrain:\n  global_batch_size: 512\n"
                                        "datamodule:\n  batch_size: 16\n",
    "configs/experiment/owt/small.yaml": "# @package _global_\ndefaults:\n  - /experiment/owt/base.yaml\n"
                                         "  - override /model: gpt2\n  - override /model/gpt2model: gpt2-medium\n"
                                         "datamodule:\n  batch_size: ${eval:\"8 if ${trainer.devices} > 4 else 16\"}\n",
}


def files(tmp_path):
    for rel, text in CONFIGS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def read(root):
    def r(rel):
        p = root / rel
        return p.read_text() if p.is_file() else None
    return r


def test_an_experiment_chosen_on_the_command_line_pulls_its_defaults_and_overrides_in_hydra_order(tmp_path):
    t = compose(read(files(tmp_path)), "configs", "config", ["experiment=owt/small", "trainer.devices=8"])
    d = t.data
    assert d["trainer"]["max_steps"] == 400000 and d["trainer"]["max_epochs"] == 1000
    assert d["model"]["name"] == "gpt2"  # `override /model: gpt2` in the experiment beats its base's null
    assert d["model"]["config"]["n_layer"] == 24  # the nested group's override, at its @package
    assert d["datamodule"]["batch_size"] == 8  # ${eval:...} over the command line's devices
    assert d["trainer"]["accumulate_grad_batches"] == 8  # div_up(512, devices 8 x batch 8)
    assert t.where["trainer.max_steps"] == "configs/experiment/owt/base.yaml:5"


def test_resolvers_never_run_anything_but_literal_arithmetic():
    assert safe_eval("16 if 40 < 24 else (32 if 40 < 48 else 64)") == 32
    for hostile in ("__import__('os').system('true')", "open('/etc/passwd').read()", "(lambda: 1)()", "2 ** 10000"):
        try:
            safe_eval(hostile)
        except ValueError:
            continue
        raise AssertionError(f"{hostile} was evaluated")


def test_a_hydra_job_is_read_as_hydra_composes_it(tmp_path):
    wd = files(tmp_path)
    (wd / "run.py").write_text(
        "import hydra\n\n\n@hydra.main(config_path='configs/', config_name='config.yaml')\n"
        "def main(cfg):\n    trainer = hydra.utils.instantiate(cfg.trainer)\n")
    f = analyze_code(wd, "python run.py experiment=owt/small trainer.devices=8", use_llm=False).facts
    assert f["train_steps"].value == 400000 and f["global_batch_size"].value == 512


def test_hydras_own_config_path_and_name_options_choose_the_config(tmp_path):
    wd = files(tmp_path)
    (wd / "yamls").mkdir()
    (wd / "yamls" / "big.yaml").write_text("trainer:\n  max_steps: 550000\n  device_train_microbatch_size: 16\n")
    (wd / "run.py").write_text("import hydra\n\n\n@hydra.main(version_base=None)\ndef main(cfg):\n    train(cfg)\n")
    f = analyze_code(wd, "composer run.py --config-path yamls --config-name big.yaml", use_llm=False).facts
    assert f["train_steps"].value == 550000 and f["micro_batch_size"].value == 16
