"""A config function the entry calls with its flags (`get_config(FLAGS.epochs, FLAGS.batch_size)`) sees the
flags' values: its parameters and the returned dict's fields computed from them are the job's config, while a
field that needs a run-time value stays unset and a call under a branch the command line rules out is skipped."""

from __future__ import annotations

import ast

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.params import COMMAND_LINE, ParamSpace
from schedmate.codeprof.static.config_calls import apply_config_call, returned_dict_fields
from tests.codeprof.codeprof_support import make_job

CONFIG = '''
from pretrainer import data

_RATES = {20: 0.5, 80: 0.3}


def get_config(num_epochs: int, batch_size: int, warmup_epochs: int = 2):
    assert num_epochs in _RATES
    images = data.Split.TRAIN.num_examples
    config = dict(
        seed=3,
        batch_size=batch_size,
        max_steps=num_epochs * 50_000 // batch_size,
        total_images=num_epochs * images,
        optimizer=dict(warmup_steps=warmup_epochs * 50_000 // batch_size, rate=_RATES[num_epochs]),
    )
    return config
'''

EVAL_CONFIG = '''
def get_config(checkpoint: str, batch_size: int):
    return dict(checkpoint=checkpoint, batch_size=batch_size, max_steps=7)
'''

MAIN = '''
from absl import app, flags
from pretrainer.configs import pretrain as pretrain_config
from pretrainer.configs import probe as probe_config

flags.DEFINE_string("mode", "pretrain", "pretrain or probe")
flags.DEFINE_integer("epochs", 80, "Pre-training epochs.")
flags.DEFINE_integer("batch_size", 1024, "Total batch size.")
FLAGS = flags.FLAGS


def main(_):
    if FLAGS.mode == "pretrain":
        config = pretrain_config.get_config(FLAGS.epochs, FLAGS.batch_size)
    elif FLAGS.mode == "probe":
        config = probe_config.get_config("/tmp/ckpt", FLAGS.batch_size)
    train(config)


if __name__ == "__main__":
    app.run(main)
'''

FILES = {"pretrainer/__init__.py": "", "pretrainer/configs/__init__.py": "",
         "pretrainer/configs/pretrain.py": CONFIG, "pretrainer/configs/probe.py": EVAL_CONFIG,
         "pretrainer/main.py": MAIN}


def test_the_returned_dicts_fields_come_with_their_dotted_keys():
    fn = ast.parse(CONFIG).body[-1]
    assert isinstance(fn, ast.FunctionDef)
    keys = [k for k, _ in returned_dict_fields(fn)]
    assert keys == ["seed", "batch_size", "max_steps", "total_images", "optimizer.warmup_steps", "optimizer.rate"]


def test_bound_parameters_and_the_fields_computed_from_them_are_set_and_the_rest_left_alone():
    fn = ast.parse(CONFIG).body[-1]
    assert isinstance(fn, ast.FunctionDef)
    P = ParamSpace()
    apply_config_call(P, fn, "main.py:9", [(20, COMMAND_LINE), (500, COMMAND_LINE)], {})
    assert P.get("num_epochs").value == 20 and P.get("max_steps").value == 2000
    assert P.get("optimizer.warmup_steps").value == 200  # the default warmup_epochs=2
    assert P.get("total_images") is None  # needs the dataset's size, known only at run time
    assert P.get("max_steps").layer == COMMAND_LINE


def test_the_epochs_given_on_the_command_line_reach_the_config_functions_steps(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python -m pretrainer.main --epochs=20 --batch_size=500", use_llm=False).facts
    assert f["train_steps"].value == 2000 and f["global_batch_size"].value == 500  # 20 * 50_000 // 500


def test_a_config_call_on_a_branch_the_command_line_rules_out_is_not_read(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python -m pretrainer.main --mode=probe --batch_size=500", use_llm=False).facts
    assert "train_steps" not in f  # the pre-training config's max_steps is not the probe's
    assert f["epochs"].value == 80
