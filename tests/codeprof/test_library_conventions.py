"""Jobs built on a library that is not in their directory are read the way the library would run them."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

TRAIN_NET = """\
from detectron2.config import get_cfg
from detectron2.engine import DefaultTrainer, default_argument_parser, default_setup, launch


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    default_setup(cfg, args)
    return cfg


def main(args):
    cfg = setup(args)
    trainer = DefaultTrainer(cfg)
    return trainer.train()


if __name__ == "__main__":
    args = default_argument_parser().parse_args()
    launch(main, args.num_gpus, num_machines=args.num_machines, machine_rank=args.machine_rank, args=(args,))
"""


def detectron2_job(tmp_path: Path, base: str, config: str) -> Path:
    (tmp_path / "tools").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "tools" / "train_net.py").write_text(TRAIN_NET)
    (tmp_path / "configs" / "Base-RCNN-FPN.yaml").write_text(base)
    (tmp_path / "configs" / "run.yaml").write_text(config)
    return tmp_path


BASE = """\
MODEL:
  META_ARCHITECTURE: "GeneralizedRCNN"
  BACKBONE:
    NAME: "build_resnet_fpn_backbone"
SOLVER:
  IMS_PER_BATCH: 16
  MAX_ITER: 90000
"""


def test_a_detectron2_job_takes_gpus_from_num_gpus_and_overrides_from_trailing_key_value_pairs(tmp_path):
    wd = detectron2_job(tmp_path, BASE, '_BASE_: "Base-RCNN-FPN.yaml"\nMODEL:\n  MASK_ON: True\nSOLVER:\n  MAX_ITER: 270000\n')
    p = analyze_code(wd, "python tools/train_net.py --config-file configs/run.yaml --num-gpus 8 "
                         "SOLVER.IMS_PER_BATCH 32 SOLVER.BASE_LR 0.04", use_llm=False)
    f = p.facts
    assert f["num_gpus"].value == 8
    assert f["global_batch_size"].value == 32  # IMS_PER_BATCH is the total over all GPUs
    assert f["micro_batch_size"].value == 4
    assert f["train_steps"].value == 270000
    assert f["model_name"].value == "mask-rcnn-r50-fpn"
    assert f["params"].value == 44.4e6


def test_a_detectron2_job_without_num_gpus_runs_on_one_gpu_with_the_library_defaults(tmp_path):
    wd = detectron2_job(tmp_path, "MODEL:\n  BACKBONE:\n    NAME: build_resnet_fpn_backbone\n",
                        '_BASE_: "Base-RCNN-FPN.yaml"\n')
    p = analyze_code(wd, "python tools/train_net.py --config-file configs/run.yaml", use_llm=False)
    f = p.facts
    assert f["num_gpus"].value == 1  # default_argument_parser: --num-gpus 1
    assert f["global_batch_size"].value == 16 and f["train_steps"].value == 40000  # get_cfg() defaults
    assert f["model_name"].value == "faster-rcnn-r50-fpn"


def test_library_conventions_need_the_library_a_script_with_the_same_flag_names_is_read_as_written(tmp_path):
    (tmp_path / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--num-gpus', type=int)\n"
        "p.add_argument('--batch-size', type=int, default=64)\nargs = p.parse_args()\n"
    )
    p = analyze_code(tmp_path, "python train.py SOLVER.IMS_PER_BATCH 32", use_llm=False)
    assert p.facts.get("train_steps") is None  # no detectron2 defaults without detectron2
    assert p.facts["micro_batch_size"].value == 64


def test_an_openmmlab_config_gives_the_per_gpu_batch_of_the_training_loader_over_its_bases(tmp_path):
    (tmp_path / "configs" / "_base_").mkdir(parents=True)
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(
        "from mmengine.config import Config\nfrom mmengine.runner import Runner\n\n"
        "cfg = Config.fromfile(args.config)\nrunner = Runner.from_cfg(cfg)\nrunner.train()\n"
    )
    (tmp_path / "configs" / "_base_" / "base.py").write_text(
        "train_batch_size_per_gpu = 16\ntrain_dataloader = dict(batch_size=train_batch_size_per_gpu)\n"
        "val_dataloader = dict(batch_size=1)\noptim_wrapper = dict(batch_size_per_gpu=train_batch_size_per_gpu)\n"
        "train_cfg = dict(max_epochs=300)\n"
    )
    (tmp_path / "configs" / "run.py").write_text(
        "_base_ = './_base_/base.py'\ntrain_batch_size_per_gpu = 12\n"
        "train_dataloader = dict(batch_size=train_batch_size_per_gpu)\ntrain_cfg = dict(max_epochs=40)\n"
    )
    f = analyze_code(tmp_path, "python tools/train.py configs/run.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 12 and f["epochs"].value == 40
    assert f["num_gpus"].value == 1  # no launcher: the runner's `launcher='none'`, one GPU


def test_an_ultralytics_job_splits_its_total_batch_over_the_gpus_and_accumulates_to_the_nominal_batch(tmp_path):
    p = analyze_code(tmp_path, "yolo detect train data=coco.yaml model=yolo11n.yaml", use_llm=False)
    f = p.facts
    assert f["num_gpus"].value == 1 and f["epochs"].value == 100  # the library's defaults
    assert f["micro_batch_size"].value == 16 and f["global_batch_size"].value == 64  # 4 x 16 up to nbs 64
    f = analyze_code(tmp_path, "yolo train model=yolo11s.pt batch=64 device=0,1,2,3 epochs=300", use_llm=False).facts
    assert f["num_gpus"].value == 4 and f["micro_batch_size"].value == 16 and f["global_batch_size"].value == 64
    assert f["epochs"].value == 300 and f["params"].value == 9.4e6


def test_a_schedulers_milestones_are_not_the_run_length(tmp_path):
    wd = detectron2_job(tmp_path, BASE, '_BASE_: "Base-RCNN-FPN.yaml"\nSOLVER:\n  STEPS: (210000, 250000)\n'
                                        '  MAX_ITER: 270000\n')
    f = analyze_code(wd, "python tools/train_net.py --config-file configs/run.yaml --num-gpus 8", use_llm=False).facts
    assert f["train_steps"].value == 270000
HF_SCRIPT = '''
from transformers import HfArgumentParser, Trainer, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
Trainer(model=None, args=args).train()
'''


def test_a_step_count_set_from_an_unset_variable_leaves_the_run_length_unknown_not_the_default_epochs(tmp_path):
    from tests.codeprof.codeprof_support import make_job

    wd = make_job(tmp_path / "open", {"train.py": HF_SCRIPT}, "python train.py --output_dir out --max_steps $MAX_STEPS")
    got = analyze_code(wd, None, use_llm=False).to_contract()
    assert got["train_steps"] is None and got["epochs"] is None
    plain = make_job(tmp_path / "plain", {"train.py": HF_SCRIPT}, "python train.py --output_dir out")
    assert analyze_code(plain, None, use_llm=False).to_contract()["epochs"] == 3  # the library default


def test_a_maskformer_config_names_its_model_by_decoder_and_backbone_not_by_the_decoders_dims(tmp_path):
    base = ("MODEL:\n  META_ARCHITECTURE: MaskFormer\n  BACKBONE:\n    NAME: D2SwinTransformer\n  SWIN:\n"
            "    EMBED_DIM: 192\n  MASK_FORMER:\n    TRANSFORMER_DECODER_NAME: MultiScaleMaskedTransformerDecoder\n"
            "    HIDDEN_DIM: 256\n    DEC_LAYERS: 10\n    DIM_FEEDFORWARD: 2048\n")
    wd = detectron2_job(tmp_path, base, '_BASE_: "Base-RCNN-FPN.yaml"\n')
    f = analyze_code(wd, "python tools/train_net.py --config-file configs/run.yaml --num-gpus 8", use_llm=False).facts
    assert f["model_name"].value == "mask2former-swin-l" and f["params"].value == 216e6


def test_an_openmmlab_repeat_dataset_makes_each_trainer_epoch_that_many_passes(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(
        "from mmengine.runner import Runner\nrunner = Runner.from_cfg(cfg)\nrunner.train()\n")
    (tmp_path / "configs" / "run.py").write_text(
        "train_dataloader = dict(batch_size=6, dataset=dict(type='RepeatDataset', times=2, dataset=dict(type='K')))\n"
        "train_cfg = dict(by_epoch=True, max_epochs=80)\n")
    f = analyze_code(tmp_path, "python tools/train.py configs/run.py", use_llm=False).facts
    assert f["epochs"].value == 160 and f["micro_batch_size"].value == 6


def test_openmmlab_gradient_accumulation_multiplies_the_global_batch(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text(
        "from mmengine.runner import Runner\nrunner = Runner.from_cfg(cfg)\nrunner.train()\n")
    (tmp_path / "configs" / "run.py").write_text(
        "train_dataloader = dict(batch_size=16)\ntrain_cfg = dict(by_epoch=True, max_epochs=12)\n"
        "optim_wrapper = dict(type='AmpOptimWrapper', accumulative_counts=4)\n")
    f = analyze_code(tmp_path, "torchrun --nproc_per_node 8 tools/train.py configs/run.py --launcher pytorch",
                     use_llm=False).facts
    assert f["micro_batch_size"].value == 16 and f["num_gpus"].value == 8
    assert f["global_batch_size"].value == 16 * 4 * 8
