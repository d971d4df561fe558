"""absl flag files stand for their flags at their place on the command line; `--config=cfg.py:arg` hands the
argument to `get_config(arg)`, whose `if` branches on known values are followed, not merged."""

from __future__ import annotations

from schedmate.codeprof.absl_flags import expand_flagfiles
from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.config_tree import ml_collections_config
from tests.codeprof.codeprof_support import make_job

ABSL_ENTRY = """
    import tensorflow as tf
    from absl import app, flags
    flags.DEFINE_integer("global_batch", 128, "Batch over all replicas.")
    flags.DEFINE_integer("num_train_steps", 10000, "Optimizer steps.")
    FLAGS = flags.FLAGS

    def main(_):
        strategy = tf.distribute.MirroredStrategy()
        ds = make_dataset().batch(FLAGS.global_batch)
        for step in range(FLAGS.num_train_steps):
            strategy.run(train_step, args=(next(ds),))

    if __name__ == "__main__":
        app.run(main)
"""


def test_a_flagfile_expands_in_place_and_a_later_flag_wins():
    files = {"flags/base.cfg": "# shared\n--global_batch=512\n\n// steps\n--num_train_steps=300\n"}
    got = expand_flagfiles(["--flagfile=flags/base.cfg", "--num_train_steps=900"], files.get)
    assert got == ["--global_batch=512", "--num_train_steps=300", "--num_train_steps=900"]


def test_a_nested_flagfile_is_read_and_a_missing_one_is_named():
    files = {"f/a.txt": "--flagfile=f/b.txt\n--x=1\n", "f/b.txt": "--y=2\n"}
    notes: list[str] = []
    assert expand_flagfiles(["--flagfile", "f/a.txt", "--flagfile=f/none.txt"], files.get, "", notes) == \
        ["--y=2", "--x=1"]
    assert notes == ["flagfile f/none.txt not read"]


def test_absl_flags_from_a_flagfile_override_the_defaults(tmp_path):
    make_job(tmp_path, {"trainer.py": ABSL_ENTRY, "flags/large.flags": "--global_batch=2048\n--num_train_steps=45000\n"})
    f = analyze_code(tmp_path, "python trainer.py --flagfile=flags/large.flags --num_train_steps=50000",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 2048
    assert f["train_steps"].value == 50000


VARIANT_CONFIG = """
    import ml_collections

    SIZES = {"tiny": 6, "base": 12}

    def get_config(variant="base"):
        config = ml_collections.ConfigDict()
        config.model_depth = SIZES[variant]
        if variant == "tiny":
            config.batch_size = 1024
            config.num_epochs = 30
        else:
            config.batch_size = 256
            config.num_epochs = 90
        config.total_steps = config.num_epochs * 1000
        return config
"""


def test_the_config_argument_reaches_get_config_and_decides_its_branch():
    assert ml_collections_config(VARIANT_CONFIG.replace("\n    ", "\n"), "tiny") | {} == {
        "SIZES": {"tiny": 6, "base": 12}, "model_depth": 6, "batch_size": 1024, "num_epochs": 30, "total_steps": 30000}


def test_without_an_argument_get_config_takes_its_default_branch():
    got = ml_collections_config(VARIANT_CONFIG.replace("\n    ", "\n"))
    assert (got["batch_size"], got["num_epochs"], got["total_steps"]) == (256, 90, 90000)


def test_a_config_variant_on_the_command_line_sets_the_batch_and_the_steps(tmp_path):
    make_job(tmp_path, {
        "configs/vit.py": VARIANT_CONFIG,
        "main.py": """
            import jax
            from absl import app
            from ml_collections import config_flags
            _CONFIG = config_flags.DEFINE_config_file("config")

            def main(_):
                config = _CONFIG.value
                per_device = config.batch_size // jax.device_count()
                for step in range(config.total_steps):
                    train_step(per_device)

            if __name__ == "__main__":
                app.run(main)
        """,
    })
    f = analyze_code(tmp_path, "python main.py --config=configs/vit.py:tiny", use_llm=False).facts
    assert f["global_batch_size"].value == 1024
    assert f["train_steps"].value == 30000


def test_a_helper_that_wraps_keywords_in_a_config_dict_is_read_as_a_dict():
    text = '''
import ml_collections

def section(**kw):
    """One section of the config."""
    return ml_collections.ConfigDict(initial_dictionary=kw)

def get_config():
    config = ml_collections.ConfigDict()
    config.optim = section(total_steps=250000, global_batch=512)
    config.data = ml_collections.ConfigDict({"crop": 224})
    config.eval = ml_collections.ConfigDict(dict(batch=64))
    return config
'''
    got = ml_collections_config(text)
    assert got["optim"] == {"total_steps": 250000, "global_batch": 512}
    assert got["data"] == {"crop": 224} and got["eval"] == {"batch": 64}
