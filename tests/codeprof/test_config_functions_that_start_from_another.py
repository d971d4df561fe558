"""An ml_collections `get_config()` that starts from another config module's `get_config()` inherits its
fields and overrides some of them."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FILES = {
    "bench/task/train.py": """
        import jax
        from absl import app, flags
        from ml_collections import config_flags
        FLAGS = flags.FLAGS
        config_flags.DEFINE_config_file("config", None, "Training configuration.")

        def main(argv):
            config = FLAGS.config
            batch_size = config.batch_size
            if batch_size % jax.device_count() > 0:
                raise ValueError("batch size must divide the devices")
            for step in range(config.num_train_steps):
                pass

        if __name__ == "__main__":
            app.run(main)
    """,
    "bench/__init__.py": "",
    "bench/task/__init__.py": "",
    "bench/task/configs/__init__.py": "",
    "bench/task/configs/shared.py": """
        import ml_collections

        def get_config():
            config = ml_collections.ConfigDict()
            config.batch_size = 64
            config.num_train_steps = 20000
            config.learning_rate = 0.05
            return config
    """,
    "bench/task/configs/small.py": """
        from bench.task.configs import shared

        def get_config():
            config = shared.get_config()
            config.num_train_steps = 7000
            return config
    """,
    "bench/task/configs/sibling.py": """
        from . import shared

        def get_config():
            config = shared.get_config()
            config.batch_size = 16
            return config
    """,
}


def test_a_config_function_built_on_another_modules_config_inherits_and_overrides_it(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python bench/task/train.py --config=bench/task/configs/small.py",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 64  # from the base config module
    assert f["train_steps"].value == 7000  # the child's own value wins


def test_a_relative_import_of_the_base_config_is_its_sibling_file(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python bench/task/train.py --config=bench/task/configs/sibling.py",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 16 and f["train_steps"].value == 20000


def test_a_config_function_reads_module_level_size_tables(tmp_path):
    make_job(tmp_path, {**FILES, "bench/task/configs/sized.py": """
        import ml_collections

        VARIANT = 'NET-M'
        BATCH = {'S': 32, 'M': 128, 'L': 512}
        STEPS = {'S': 1000, 'M': 4000, 'L': 9000}

        def get_config():
            config = ml_collections.ConfigDict()
            _, size = VARIANT.split('-')
            config.batch_size = BATCH[size]
            config.num_train_steps = STEPS[size]
            return config
    """})
    f = analyze_code(tmp_path, "python bench/task/train.py --config=bench/task/configs/sized.py",
                     use_llm=False).facts
    assert f["global_batch_size"].value == 128 and f["train_steps"].value == 4000
