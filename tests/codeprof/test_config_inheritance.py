"""Config files are read with everything they inherit, the way the training framework would merge them."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.config_tree import load_tree


def reader(files: dict[str, str]):
    return files.get


def test_a_python_config_inherits_its_bases_in_order_and_overrides_them():
    files = {
        "configs/_base_/schedule.py": "train_cfg = dict(by_epoch=True, max_epochs=100)\noptim = dict(lr=0.1, wd=1e-4)\n",
        "configs/_base_/data.py": "train_dataloader = dict(batch_size=32, num_workers=4)\n",
        "configs/net/run.py": "_base_ = ['../_base_/schedule.py', '../_base_/data.py']\n"
                              "train_cfg = dict(max_epochs=300)\noptim = dict(_delete_=True, lr=0.5)\n",
    }
    tree = load_tree(reader(files), "configs/net/run.py")
    assert tree.data["train_cfg"] == {"by_epoch": True, "max_epochs": 300}
    assert tree.data["optim"] == {"lr": 0.5}  # _delete_ replaces instead of merging
    assert tree.data["train_dataloader"]["batch_size"] == 32
    assert tree.where["train_dataloader.batch_size"] == "configs/_base_/data.py:1"
    assert tree.where["train_cfg.max_epochs"] == "configs/net/run.py:2"


def test_a_yacs_config_follows_its_base_chain():
    files = {
        "configs/Base.yaml": "SOLVER:\n  IMS_PER_BATCH: 16\n  MAX_ITER: 90000\n",
        "configs/R50.yaml": '_BASE_: "Base.yaml"\nSOLVER:\n  MAX_ITER: 270000\n',
    }
    tree = load_tree(reader(files), "configs/R50.yaml")
    assert tree.data["SOLVER"] == {"IMS_PER_BATCH": 16, "MAX_ITER": 270000}


def test_omegaconf_interpolations_resolve_including_environment_defaults():
    files = {"c.yaml": "global_bs: 512\nmicro: ${oc.env:MICRO,4}\ntrain:\n  bs: ${global_bs}\n  steps: ${..max}\nmax: 10\n"}
    tree = load_tree(reader(files), "c.yaml")
    assert tree.data["train"]["bs"] == 512 and tree.data["micro"] == 4
    assert load_tree(reader(files), "c.yaml", env={"MICRO": "2"}).data["micro"] == 2


def test_an_inheritance_cycle_is_cut_and_said():
    files = {"a.yaml": "_BASE_: b.yaml\nx: 1\n", "b.yaml": "_BASE_: a.yaml\ny: 2\n"}
    tree = load_tree(reader(files), "a.yaml")
    assert tree.data == {"x": 1, "y": 2}
    assert any("cycle" in n for n in tree.notes)


def test_a_missing_base_is_named_not_guessed():
    tree = load_tree(reader({"a.py": "_base_ = './gone.py'\nepochs = 5\n"}), "a.py")
    assert tree.data == {"epochs": 5}
    assert any("gone.py" in n for n in tree.notes)


def test_python_config_values_that_are_calls_are_left_out():
    tree = load_tree(reader({"a.py": "import os\nbs = int(os.environ['BS'])\nepochs = 2 * 6\nd = dict(a=bs, b=3)\n"}),
                     "a.py")
    assert tree.data == {"epochs": 12, "d": {"b": 3}}


def test_the_analyzer_reads_steps_and_batch_from_an_inherited_config(tmp_path: Path):
    files = {
        "configs/Base.yaml": "SOLVER:\n  IMS_PER_BATCH: 16\n  MAX_ITER: 90000\n",
        "configs/R50.yaml": '_BASE_: "Base.yaml"\nSOLVER:\n  MAX_ITER: 270000\n',
        "train_net.py": "import argparse\np = argparse.ArgumentParser()\np.add_argument('--config-file')\n"
                        "args = p.parse_args()\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    prof = analyze_code(tmp_path, command="python train_net.py --config-file configs/R50.yaml", use_llm=False)
    assert prof.value("train_steps") == 270000
    assert "configs/R50.yaml:3" in prof.facts["train_steps"].evidence


def test_a_field_left_null_says_why_in_the_warnings(tmp_path: Path):
    (tmp_path / "train.py").write_text("import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2)).cuda()\n")
    prof = analyze_code(tmp_path, command="python train.py", use_llm=False)
    assert prof.value("num_gpus") is None  # DataParallel takes every visible GPU: decided at submission
    assert any(w.startswith("num_gpus:") and "DataParallel" in w for w in prof.warnings)
    assert any(w.startswith("train_steps: unknown") for w in prof.warnings)


def test_a_gin_file_gives_its_macros_and_bindings_and_follows_includes():
    files = {"base.gin": "BATCH_SIZE = 128\ntrain.batch_size = %BATCH_SIZE\n",
             "run.gin": "include 'base.gin'\nTRAIN_STEPS = 10000  # steps\nutils.SaveCheckpointConfig.period = 1000\n"}
    tree = load_tree(reader(files), "run.gin")
    assert tree.data["TRAIN_STEPS"] == 10000 and tree.data["train.batch_size"] == 128


def test_an_ml_collections_get_config_is_read_without_running_it():
    text = ("import ml_collections\n\ndef get_config():\n  config = ml_collections.ConfigDict()\n"
            "  config.batch_size = 1024\n  steps = 90_000\n  config.num_train_steps = steps\n"
            "  config.model = ml_collections.ConfigDict()\n  config.model.num_layers = 12\n"
            "  config.seed = some_call()\n  return config\n")
    tree = load_tree(reader({"cfg.py": text}), "cfg.py")
    assert tree.data == {"batch_size": 1024, "num_train_steps": 90000, "model": {"num_layers": 12}}


def test_a_composer_duration_in_batches_is_the_step_count(tmp_path: Path):
    (tmp_path / "train.py").write_text("import sys\nimport torch\nfrom omegaconf import OmegaConf\n"
                                       "cfg = OmegaConf.load(sys.argv[1])\nx = torch.zeros(1).cuda()\n")
    (tmp_path / "mpt.yaml").write_text("max_duration: 4800ba\nglobal_train_batch_size: 256\n"
                                       "device_train_microbatch_size: 8\n")
    prof = analyze_code(tmp_path, command="composer train.py mpt.yaml", use_llm=False)
    assert prof.value("train_steps") == 4800
    assert prof.value("global_batch_size") == 256 and prof.value("micro_batch_size") == 8


def test_a_yacs_default_config_module_gives_code_defaults_that_the_yaml_overrides(tmp_path: Path):
    files = {
        "config.py": "from yacs.config import CfgNode as CN\n_C = CN()\n_C.TRAIN = CN()\n_C.TRAIN.EPOCHS = 300\n"
                     "_C.DATA = CN()\n_C.DATA.BATCH_SIZE = 128\n\ndef get_config(args):\n    return _C.clone()\n",
        "main.py": "import argparse\nimport torch\nfrom config import get_config\np = argparse.ArgumentParser()\n"
                   "p.add_argument('--cfg')\nargs = p.parse_args()\nconfig = get_config(args)\n"
                   "model = torch.nn.Linear(2, 2).cuda()\n",
        "short.yaml": "TRAIN:\n  EPOCHS: 30\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    prof = analyze_code(tmp_path, command="torchrun --nproc_per_node 8 main.py --cfg short.yaml", use_llm=False)
    assert prof.value("epochs") == 30 and prof.value("micro_batch_size") == 128
    assert "config.py:6" in prof.facts["micro_batch_size"].evidence


def test_yaml_with_application_tags_is_read_and_ref_tags_resolve():
    text = ("seed: !apply:torch.manual_seed [1]\nnumber_of_epochs: 100\nbatch_size: 32\n"
            "train_opts:\n  batch_size: !ref <batch_size>\nmodel: !new:pkg.Model\n  d_model: 512\n")
    tree = load_tree(reader({"h.yaml": text}), "h.yaml")
    assert tree.data["train_opts"]["batch_size"] == 32 and tree.data["model"] == {"d_model": 512}


def test_a_batch_size_whose_help_says_total_over_all_gpus_is_the_global_batch(tmp_path: Path):
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
        "p.add_argument('--batch-size', type=int, default=16, help='total batch size for all GPUs')\n"
        "opt = p.parse_args()\nmodel = torch.nn.Linear(2, 2).cuda()\n")
    prof = analyze_code(tmp_path, command="torchrun --nproc_per_node 4 train.py --batch-size 64", use_llm=False)
    assert prof.value("global_batch_size") == 64 and prof.value("micro_batch_size") == 16


def test_a_hydra_group_choice_on_the_command_line_merges_the_option_file_at_its_package(tmp_path):
    files = {
        "configs/config/train/base.yaml": "# @package _global_\nconfig:\n  DATA:\n    TRAIN:\n"
                                          "      BATCHSIZE_PER_REPLICA: 64\n  OPTIMIZER:\n    num_epochs: 100\n",
        "configs/config/train/models/wide.yaml": "# @package _global_\nconfig:\n  DATA:\n    TRAIN:\n"
                                                 "      BATCHSIZE_PER_REPLICA: 32\n",
        "run.py": "import torch\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    p = analyze_code(tmp_path, "python run.py config=train/base +config/train/models=wide", use_llm=False)
    assert p.facts["micro_batch_size"].value == 32  # the group's option overrides the base config
    assert p.facts["epochs"].value == 100


def test_an_ml_collections_config_folds_conditionals_lookups_and_earlier_fields_without_running_anything():
    text = (
        "import ml_collections\nVARIANT = 'B/16'\n\n\ndef get_config(runlocal=''):\n"
        "  runlocal = bool(runlocal)\n  config = ml_collections.ConfigDict()\n"
        "  version, patch = VARIANT.split('/')\n  config.model = ml_collections.ConfigDict()\n"
        "  config.model.hidden_size = {'S': 384, 'B': 768}[version]\n"
        "  config.batch_size = 8 if runlocal else 4096\n"
        "  config.steps = 90 * (1281167 // config.batch_size)\n"
        "  config.seed = __import__('os').getpid()\n  return config\n")
    tree = load_tree(reader({"c.py": text}), "c.py")
    assert tree.data["model"]["hidden_size"] == 768 and tree.data["batch_size"] == 4096
    assert tree.data["steps"] == 90 * 312
    assert "seed" not in tree.data  # a call the reader does not know is left out, never run


def test_a_gpt_neox_config_is_a_model_config_beside_its_deepspeed_keys_even_with_a_forgotten_comma(tmp_path):
    (tmp_path / "cfg.yml").write_text(
        '{\n  # parallelism\n  "model-parallel-size": 1,\n  "num-layers": 12,\n  "hidden-size": 768,\n'
        '  "num-attention-heads": 12,\n  "seq-length": 2048,\n  "no-weight-tying": true,\n'
        '  "attention-config": [[["flash"], 12]]\n\n  "train_micro_batch_size_per_gpu": 32,\n'
        '  "zero_optimization": {"stage": 1},\n  "train-iters": 143000\n}\n')
    f = analyze_code(tmp_path, "python deepy.py train.py cfg.yml", use_llm=False).facts
    assert f["micro_batch_size"].value == 32 and f["train_steps"].value == 143000
    assert f["params"].value == 12 * 12 * 768 ** 2 + 2 * 50257 * 768  # untied GPT-2 vocabulary, rotary positions
