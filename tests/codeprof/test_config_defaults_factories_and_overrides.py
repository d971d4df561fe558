"""ml_collections configs that start from a shared defaults factory (a function of any name imported from a
module of defaults), name subtrees through local aliases, and take `--config.X=v` overrides on the command
line; OpenMMLab 1.x configs with per-loader settings; a zero accumulation count."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TRAIN = """
    import jax
    from absl import app, flags
    from ml_collections.config_flags import config_flags
    FLAGS = flags.FLAGS
    config_flags.DEFINE_config_file("config", None, "Training configuration.")
    flags.DEFINE_string("outdir", None, "Where runs go.")

    def main(argv):
        cfg = FLAGS.config
        per_device = cfg.training.batch_size // jax.device_count()
        for step in range(cfg.training.num_train_steps):
            pass

    if __name__ == "__main__":
        app.run(main)
"""

DEFAULTS = """
    import ml_collections

    def make_base_settings():
        config = ml_collections.ConfigDict()
        config.training = training = ml_collections.ConfigDict()
        training.batch_size = 96
        training.num_train_steps = 45000
        config.evaluation = evaluation = ml_collections.ConfigDict()
        evaluation.batch_size = 400
        return config
"""

VARIANT = """
    from settings.base_settings import make_base_settings

    def get_config():
        config = make_base_settings()
        training = config.training
        training.warm_up = 700
        config.net_width = 160
        return config
"""


def _job(tmp_path):
    return make_job(tmp_path, {"trainer.py": TRAIN, "settings/__init__.py": "",
                               "settings/base_settings.py": DEFAULTS, "settings/wide.py": VARIANT})


def test_a_config_started_from_an_imported_defaults_function_inherits_its_training_fields(tmp_path):
    f = analyze_code(_job(tmp_path), "python trainer.py --config settings/wide.py --outdir runs",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 96  # the training subtree's batch, not the evaluation one
    assert f["train_steps"].value == 45000  # set through the `training` alias of the subtree


def test_command_line_fields_of_the_config_flag_beat_the_defaults_module(tmp_path):
    f = analyze_code(_job(tmp_path), "python trainer.py --config settings/wide.py "
                     "--config.training.batch_size=48 --config.training.num_train_steps=9000",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 48
    assert f["train_steps"].value == 9000


def test_an_openmmlab_1x_config_with_a_per_loader_batch_gives_the_per_gpu_batch(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": """
            import argparse
            from mmcv import Config
            parser = argparse.ArgumentParser()
            parser.add_argument("config")
            parser.add_argument("--launcher", default="none")
            args = parser.parse_args()
            cfg = Config.fromfile(args.config)
        """,
        "configs/_base_/datasets/scenes.py": """
            data = dict(
                train_dataloader=dict(samples_per_gpu=3, workers_per_gpu=2, drop_last=True),
                val_dataloader=dict(samples_per_gpu=1, workers_per_gpu=2),
                train=dict(type='SceneFlowSet'))
        """,
        "configs/flow/estimator_4x3_60k.py": """
            _base_ = ['../_base_/datasets/scenes.py']
            runner = dict(type='IterBasedRunner', max_iters=60000)
        """,
    })
    cmd = ("python -m torch.distributed.launch --nproc_per_node=4 tools/train.py "
           "configs/flow/estimator_4x3_60k.py --launcher pytorch")
    f = analyze_code(tmp_path, cmd, use_llm=False).facts
    assert f["micro_batch_size"].value == 3
    assert f["global_batch_size"].value == 12
    assert f["train_steps"].value == 60000


def test_a_zero_accumulation_setting_accumulates_nothing(tmp_path):
    make_job(tmp_path, {
        "settings.py": """
            from yacs.config import CfgNode as CN
            _C = CN()
            _C.DATA = CN()
            _C.DATA.BATCH_SIZE = 48
            _C.TRAIN = CN()
            _C.TRAIN.EPOCHS = 90
            _C.TRAIN.ACCUMULATION_STEPS = 0
        """,
        "pretrain.py": """
            import torch
            from torch.utils.data import DataLoader, DistributedSampler
            from settings import _C as config
            sampler = DistributedSampler(dataset)
            loader = DataLoader(dataset, config.DATA.BATCH_SIZE, sampler=sampler, drop_last=True)
            model = torch.nn.parallel.DistributedDataParallel(model.cuda())
            for epoch in range(config.TRAIN.EPOCHS):
                if config.TRAIN.ACCUMULATION_STEPS > 1:
                    pass
        """,
    })
    f = analyze_code(tmp_path, "torchrun --nproc_per_node 4 pretrain.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 48
    assert f["global_batch_size"].value == 192
