"""Python config files that import other config modules are read the way their loaders evaluate them:
mmengine's `read_base` star imports, detectron2-style LazyConfig named imports with fields set afterwards,
`.update(...)` calls, `L(Target)(...)` calls and `type=` naming an imported class."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.config_tree import load_tree
from schedmate.codeprof.py_module_config import evaluate, is_module_config

READ_BASE_FILES = {
    "kit/configs/_base_/datasets/flowers_bs48.py": (
        "from kit.datasets import FlowerSet\n"
        "train_dataloader = dict(batch_size=48, num_workers=3, dataset=dict(type=FlowerSet))\n"
    ),
    "kit/configs/_base_/schedules/sgd_90e.py": (
        "from mmengine.runner.loops import EpochBasedTrainLoop\n"
        "train_cfg = dict(type=EpochBasedTrainLoop, max_epochs=90, val_interval=1)\n"
        "auto_scale_lr = dict(base_batch_size=384)\n"
    ),
    "kit/configs/petalnet/petalnet-s_8xb96_flowers.py": (
        "from mmengine.config import read_base\n"
        "with read_base():\n"
        "    from .._base_.datasets.flowers_bs48 import *\n"
        "    from .._base_.schedules.sgd_90e import *\n"
        "from kit.hooks import SmoothHook\n"
        "train_dataloader.update(batch_size=96)\n"
        "train_cfg.max_epochs = 120\n"
        "custom_hooks = [dict(type=SmoothHook)]\n"
    ),
}


def test_read_base_star_imports_bring_the_base_names_and_later_lines_edit_them():
    tree = load_tree(READ_BASE_FILES.get, "kit/configs/petalnet/petalnet-s_8xb96_flowers.py")
    assert tree.data["train_dataloader"]["batch_size"] == 96  # .update() over the star-imported 48
    assert tree.data["train_dataloader"]["num_workers"] == 3
    assert tree.data["train_cfg"]["max_epochs"] == 120  # attribute assignment on an imported dict
    assert tree.data["train_cfg"]["type"] == "EpochBasedTrainLoop"  # an imported class reads as its name
    assert "SmoothHook" not in tree.data and "read_base" not in tree.data  # imported code is not a config value
    assert "kit/configs/_base_/schedules/sgd_90e.py" in tree.files


LAZY_FILES = {
    "proj/configs/shared/train.py": "train = dict(out_dir='./out', max_iter='???', amp=dict(enabled=False))\n",
    "proj/configs/shared/loader.py": (
        "from omegaconf import OmegaConf\n"
        "from detectron2.config import LazyCall as L\n"
        "from proj.data import build_loader\n"
        "dataloader = OmegaConf.create()\n"
        "dataloader.train = L(build_loader)(names='leaves_train', total_batch_size=24, num_workers=2)\n"
    ),
    "proj/configs/shared/nets.py": "model = dict(backbone=dict(depth=34, width=48))\n",
    "proj/configs/Leaves/seg_r50_30k.py": (
        "from ..shared.train import train\n"
        "from ..shared.loader import dataloader\n"
        "from ..shared.nets import model as net\n"
        "train.max_iter = 30_000\n"
        "dataloader.train.total_batch_size = 36\n"
        "net.backbone.depth = 50\n"
        "half = train.max_iter // 2\n"
    ),
}


def test_lazyconfig_named_imports_take_one_name_each_and_dotted_assignments_set_their_fields():
    tree = load_tree(LAZY_FILES.get, "proj/configs/Leaves/seg_r50_30k.py")
    assert tree.data["train"]["max_iter"] == 30000
    assert tree.data["train"]["out_dir"] == "./out"
    assert tree.data["dataloader"]["train"]["total_batch_size"] == 36  # L(...)(...) is a dict of its keywords
    assert tree.data["dataloader"]["train"]["num_workers"] == 2  # OmegaConf.create() then filled field by field
    assert tree.data["net"]["backbone"] == {"depth": 50, "width": 48}  # `import model as net`
    assert "model" not in tree.data
    assert tree.data["half"] == 15000  # arithmetic over an imported field


def test_a_config_module_found_by_its_package_path_is_star_imported():
    files = {
        "mm/configs/common.py": "batch_size = 16\nepochs = 4\nnum_frames = 8\n",
        "mm/exp/run_a/settings.py": "from configs.common import *\nbatch_size = 64\n",
    }
    rel = "mm/exp/run_a/settings.py"
    assert is_module_config(rel, files[rel], lambda p: p in files)
    tree = load_tree(files.get, rel)
    assert tree.data["batch_size"] == 64 and tree.data["epochs"] == 4


def test_a_plain_dict_config_is_not_read_as_a_module_and_unknown_imports_stay_unknown():
    plain = "_base_ = ['../base.py']\nrunner = dict(max_epochs=12)\n"
    assert not is_module_config("c/x.py", plain, lambda p: False)
    got = evaluate("c/y.py", "from .missing import thing\nsteps = thing * 2\nlr = 0.1\n", lambda p: None)
    assert "steps" not in got  # a name from a module the reader cannot find is never guessed
    assert got["lr"] == 0.1


def test_the_analyzer_reads_batch_and_length_from_a_read_base_config(tmp_path: Path):
    files = {**READ_BASE_FILES, "kit/tools/train.py": "import argparse\np = argparse.ArgumentParser()\n"
                                                       "p.add_argument('config')\nargs = p.parse_args()\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    prof = analyze_code(tmp_path / "kit", command="python tools/train.py configs/petalnet/petalnet-s_8xb96_flowers.py",
                        use_llm=False)
    assert prof.value("micro_batch_size") == 96
    assert prof.value("epochs") == 120


def test_a_type_naming_a_method_of_an_imported_class_reads_as_its_dotted_name():
    text = ("from transformers import AutoModelForCausalLM\n"
            "repo_name = 'acme/tiny-chat-1b'\n"
            "model = dict(type=AutoModelForCausalLM.from_pretrained, pretrained_model_name_or_path=repo_name)\n")
    got = evaluate("cfg/sft.py", text, lambda p: None)
    assert got["model"] == {"type": "AutoModelForCausalLM.from_pretrained",
                            "pretrained_model_name_or_path": "acme/tiny-chat-1b"}
    assert "AutoModelForCausalLM" not in got


def test_a_config_function_module_that_imports_its_defaults_stays_with_the_config_function_reader():
    text = ("from configs.shared_defaults import default_settings\n"
            "def get_config():\n    config = default_settings()\n    config.training.batch_size = 80\n"
            "    return config\n")
    assert not is_module_config("configs/ve/small_run.py", text, lambda p: p == "configs/shared_defaults.py")
