"""TF 1.x Estimator jobs on several GPUs: `MirroredStrategy(num_gpus=FLAGS.n)` names the GPUs, the input_fn's
batch is per replica when the RunConfig has a `train_distribute` strategy, and flags another module defines
under its `if __name__ == "__main__":` never exist in the run."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FILES = {
    "finetune.py": """
        import tensorflow as tf
        from absl import flags
        import helpers
        import records

        flags.DEFINE_bool("use_tpu", default=False, help="Run on TPU.")
        flags.DEFINE_integer("cores", default=8, help="Cores per host (GPUs when not on TPU).")
        flags.DEFINE_integer("train_batch_size", default=16, help="Training batch.")
        flags.DEFINE_integer("train_steps", default=3000, help="Steps to train.")
        FLAGS = flags.FLAGS

        def input_fn(params):
            batch_size = params["batch_size"] if FLAGS.use_tpu else FLAGS.train_batch_size
            return make_dataset().batch(batch_size)

        def main(_):
            run_config = helpers.make_run_config(FLAGS)
            est = tf.estimator.Estimator(model_fn=model_fn, config=run_config)
            est.train(input_fn=input_fn, max_steps=FLAGS.train_steps)

        if __name__ == "__main__":
            tf.app.run()
    """,
    "helpers.py": """
        import tensorflow as tf

        def make_run_config(FLAGS):
            if FLAGS.use_tpu:
                strategy = None
            elif FLAGS.cores == 1:
                strategy = None
            else:
                strategy = tf.contrib.distribute.MirroredStrategy(num_gpus=FLAGS.cores)
            return tf.contrib.tpu.RunConfig(model_dir="out", train_distribute=strategy)
    """,
    "records.py": """
        from absl import flags

        def build():
            return None

        if __name__ == "__main__":
            flags.DEFINE_bool("use_tpu", True, help="Make TPU records.")
    """,
}


def test_a_mirrored_strategy_over_a_flag_sets_the_gpus_and_the_batch_is_per_replica(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python finetune.py --cores=4 --train_batch_size=8", use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["micro_batch_size"].value == 8 and f["global_batch_size"].value == 32
    assert f["train_steps"].value == 3000
