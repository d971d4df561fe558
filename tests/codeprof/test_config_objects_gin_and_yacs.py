"""Config objects built in code and overridden from the command line: gin files composed in order with lazy
macros and `--gin_bindings`, yacs `opts` with lower-case fields, flags copied into yacs fields by
`update_config`, and a yacs test section beside the training one."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.gin_config import command_line, compose, gin_config
from tests.codeprof.codeprof_support import make_job

GIN_ENTRY = """
    import gin
    import jax
    from absl import app, flags
    flags.DEFINE_multi_string("gin_file", [], "Gin files.")
    flags.DEFINE_multi_string("gin_bindings", [], "Gin bindings.")
    FLAGS = flags.FLAGS

    @gin.configurable
    class LoopConfig:
        batch_size: int = gin.REQUIRED
        total_steps: int = 500000

    def main(_):
        gin.parse_config_files_and_bindings(FLAGS.gin_file, FLAGS.gin_bindings)
        cfg = LoopConfig()
        for step in range(cfg.total_steps):
            batch = next_batch(cfg.batch_size // jax.device_count())

    if __name__ == "__main__":
        app.run(main)
"""
GIN_FILES = {
    "run.py": GIN_ENTRY,
    "gin/common.gin": """
        LoopConfig.batch_size = %RAYS
        LoopConfig.total_steps = %STEPS
        eval/LoopConfig.batch_size = 8192
    """,
    "gin/small.gin": """
        include 'common.gin'
        RAYS = 512
        STEPS = 40000
    """,
    "gin/long.gin": """
        STEPS = 120000
    """,
}


def test_a_gin_macro_bound_after_the_include_that_uses_it_is_read_lazily():
    files = {"a.gin": "include 'b.gin'\nN = 7\n", "b.gin": "Fn.n = %N\nFn.m = %UNBOUND\n"}
    tree = compose(files.get, ["a.gin"], [])
    assert tree.data["Fn.n"] == 7
    assert "Fn.m" not in tree.data  # a macro bound nowhere is not a value


def test_gin_flags_are_read_in_order_in_both_spellings():
    args = ["--gin_file=x.gin", "--gin_file", "y.gin", "--gin_bindings='A.b = 3'", "--other", "1",
            "--gin_param", "C.d = 4"]
    assert command_line(args) == (["x.gin", "y.gin"], ["A.b = 3", "C.d = 4"])


def test_an_evaluation_scope_keeps_its_section_and_other_scopes_are_dropped():
    got = gin_config("train/Loader.batch_size = 64\neval/Loader.batch_size = 8\n")
    assert got == {"Loader.batch_size": 64, "eval.Loader.batch_size": 8}


def test_two_gin_files_on_the_command_line_compose_in_order(tmp_path):
    make_job(tmp_path, GIN_FILES)
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python run.py --gin_file=gin/small.gin "
                               "--gin_file=gin/long.gin", use_llm=False).facts
    assert f["global_batch_size"].value == 512
    assert f["train_steps"].value == 120000  # the later file rebinds the macro the first one's include used


def test_a_command_line_binding_rebinds_a_macro_every_reference_reads(tmp_path):
    make_job(tmp_path, GIN_FILES)
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2,3 python run.py --gin_file gin/small.gin "
                               "--gin_bindings='RAYS = 2048' --gin_bindings 'STEPS = 9000'", use_llm=False).facts
    assert f["global_batch_size"].value == 2048
    assert f["train_steps"].value == 9000


YACS_DEFAULTS = """
    from yacs.config import CfgNode as CN
    _C = CN()
    _C.TRAIN = CN()
    _C.TRAIN.per_gpu_batch = 4
    _C.TRAIN.num_epoch = 30
    _C.TRAIN.iters_per_epoch = 1000
    _C.TRAIN.OPTIM = "sgd"
"""
YACS_ENTRY = """
    import argparse
    import torch
    from defaults import _C as cfg

    def main(cfg):
        cfg.TRAIN.max_iters = cfg.TRAIN.iters_per_epoch * cfg.TRAIN.num_epoch
        loader = torch.utils.data.DataLoader(ds, batch_size=cfg.TRAIN.per_gpu_batch)
        for it in range(cfg.TRAIN.max_iters):
            step(next(loader))

    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--cfg", default="exp/base.yaml")
        parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
        args = parser.parse_args()
        cfg.merge_from_file(args.cfg)
        cfg.merge_from_list(args.opts)
        main(cfg)
"""


def test_yacs_opts_may_name_lower_case_fields_when_the_script_declares_opts(tmp_path):
    make_job(tmp_path, {"defaults.py": YACS_DEFAULTS, "train.py": YACS_ENTRY,
                        "exp/base.yaml": "TRAIN:\n  num_epoch: 12\n  per_gpu_batch: 6\n"})
    f = analyze_code(tmp_path, "python train.py TRAIN.num_epoch 3 TRAIN.per_gpu_batch 5", use_llm=False).facts
    assert f["micro_batch_size"].value == 5
    assert f["train_steps"].value == 3000  # iters_per_epoch 1000 x the overridden 3 epochs


def test_lower_case_pairs_are_not_yacs_opts_when_the_script_declares_none(tmp_path):
    entry = YACS_ENTRY.replace('parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)', "pass")
    entry = entry.replace("cfg.merge_from_list(args.opts)", "")
    make_job(tmp_path, {"defaults.py": YACS_DEFAULTS, "train.py": entry,
                        "exp/base.yaml": "TRAIN:\n  num_epoch: 12\n  per_gpu_batch: 6\n"})
    f = analyze_code(tmp_path, "python train.py TRAIN.per_gpu_batch 5", use_llm=False).facts
    assert f["micro_batch_size"].value == 6


SWIN_STYLE_CONFIG = """
    import yaml
    from yacs.config import CfgNode as CN
    _C = CN()
    _C.DATA = CN()
    _C.DATA.IMGS_PER_DEVICE = 96
    _C.TRAIN = CN()
    _C.TRAIN.EPOCHS = 120
    _C.TRAIN.ACCUMULATION_STEPS = 1

    def update_config(config, args):
        config.defrost()
        config.merge_from_file(args.cfg)
        if args.opts:
            config.merge_from_list(args.opts)
        if args.imgs:
            config.DATA.IMGS_PER_DEVICE = args.imgs
        if args.accumulation_steps:
            config.TRAIN.ACCUMULATION_STEPS = args.accumulation_steps
        config.freeze()

    def get_config(args):
        config = _C.clone()
        update_config(config, args)
        return config
"""
SWIN_STYLE_MAIN = """
    import argparse
    import torch
    from config import get_config

    def parse_option():
        parser = argparse.ArgumentParser()
        parser.add_argument("--cfg", type=str, required=True)
        parser.add_argument("--imgs", type=int, help="images per GPU")
        parser.add_argument("--accumulation-steps", type=int)
        parser.add_argument("--opts", default=None, nargs="+")
        args, _ = parser.parse_known_args()
        return args, get_config(args)

    def main(config):
        loader = torch.utils.data.DataLoader(ds, batch_size=config.DATA.IMGS_PER_DEVICE)
        for epoch in range(config.TRAIN.EPOCHS):
            train_one_epoch(loader)

    if __name__ == "__main__":
        args, config = parse_option()
        torch.distributed.init_process_group("nccl")
        main(config)
"""


def test_a_flag_that_update_config_copies_into_a_field_sets_that_field(tmp_path):
    make_job(tmp_path, {"config.py": SWIN_STYLE_CONFIG, "main.py": SWIN_STYLE_MAIN, "cfgs/tiny.yaml": "MODEL:\n  X: 1\n"})
    f = analyze_code(tmp_path, "torchrun --nproc_per_node 4 main.py --cfg cfgs/tiny.yaml --imgs 24 --accumulation-steps 2 "
                               "--opts TRAIN.EPOCHS 50", use_llm=False).facts
    assert f["micro_batch_size"].value == 24
    assert f["global_batch_size"].value == 24 * 4 * 2
    assert f["epochs"].value == 50


def test_a_yacs_test_section_does_not_hide_the_training_batch(tmp_path):
    make_job(tmp_path, {
        "tools/train.py": """
            import argparse
            import torch
            from cfgs import get_cfg

            if __name__ == "__main__":
                p = argparse.ArgumentParser()
                p.add_argument("--config-file", default="")
                p.add_argument("opts", nargs=argparse.REMAINDER)
                a = p.parse_args()
                cfg = get_cfg()
                cfg.merge_from_file(a.config_file)
                cfg.merge_from_list(a.opts)
                per_gpu = cfg.SOLVER.IMS_PER_BATCH // torch.distributed.get_world_size()
        """,
        "cfgs.py": "def get_cfg():\n    pass\n",
        "exp/reid.yml": "SOLVER:\n  IMS_PER_BATCH: 48\n  MAX_EPOCH: 20\nTEST:\n  IMS_PER_BATCH: 256\n",
    })
    f = analyze_code(tmp_path, "python tools/train.py --config-file exp/reid.yml", use_llm=False).facts
    assert f["global_batch_size"].value == 48


def test_any_positional_that_takes_the_rest_of_the_line_holds_lower_case_overrides(tmp_path):
    entry = YACS_ENTRY.replace('parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)',
                               'parser.add_argument("overrides", nargs=argparse.REMAINDER)')
    entry = entry.replace("args.opts", "args.overrides").replace("_C as cfg", "_C as cfg  # noqa")
    defaults = YACS_DEFAULTS.replace("_C.TRAIN = CN()", "_C.train = CN()").replace("_C.TRAIN.", "_C.train.")
    entry = entry.replace("cfg.TRAIN.", "cfg.train.")
    make_job(tmp_path, {"defaults.py": defaults, "train.py": entry, "exp/base.yaml": "train:\n  per_gpu_batch: 6\n"})
    f = analyze_code(tmp_path, "python train.py --cfg exp/base.yaml train.per_gpu_batch 7 train.num_epoch 2",
                     use_llm=False).facts
    assert f["micro_batch_size"].value == 7
    assert f["train_steps"].value == 2000
