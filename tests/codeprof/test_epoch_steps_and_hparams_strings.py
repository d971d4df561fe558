"""TensorFlow conventions: an Estimator trained epoch by epoch for a per-epoch step count the script computes
(the run states both its epochs and its steps), and `--hparams="name=value,..."` strings that override the
defaults of an `HParams(...)` object."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.hparams_string import split_pairs
from tests.codeprof.codeprof_support import make_job


def value(facts: dict, field: str) -> object:
    return facts[field].value if field in facts else None

ESTIMATOR_LOOP = """
    from absl import app, flags
    import tensorflow as tf

    flags.DEFINE_integer('batch_size', 128, 'examples per step')
    flags.DEFINE_integer('epochs', 12, 'passes over the digits')
    FLAGS = flags.FLAGS
    NUM_DIGITS = 48000

    def main(_):
        classifier = tf.estimator.Estimator(model_fn=digits_model_fn)
        steps_per_epoch = NUM_DIGITS // FLAGS.batch_size
        for epoch in range(FLAGS.epochs):
            classifier.train(input_fn=make_input(FLAGS.batch_size), steps=steps_per_epoch)
            report(classifier.evaluate(input_fn=make_eval()))

    if __name__ == '__main__':
        app.run(main)
"""

KERAS_FROM_DATA = """
    from absl import app, flags
    import tensorflow as tf

    flags.DEFINE_integer('batch_size', 64, 'batch')
    flags.DEFINE_integer('epochs', 7, 'epochs')
    FLAGS = flags.FLAGS

    def main(_):
        images = load_images()
        steps_per_epoch = len(images) // FLAGS.batch_size
        model = build()
        model.fit(to_dataset(images, FLAGS.batch_size), steps_per_epoch=steps_per_epoch, epochs=FLAGS.epochs)

    if __name__ == '__main__':
        app.run(main)
"""

SCHEDULE_ONLY = """
    from absl import app, flags
    import tensorflow as tf

    flags.DEFINE_integer('batch_size', 128, 'examples per step')
    flags.DEFINE_integer('epochs', 12, 'passes')
    FLAGS = flags.FLAGS

    def main(_):
        steps_per_epoch = 48000 // FLAGS.batch_size
        schedule = warmup_cosine(warmup=steps_per_epoch)
        model = build(schedule)
        model.fit(load_digits(), batch_size=FLAGS.batch_size, epochs=FLAGS.epochs)

    if __name__ == '__main__':
        app.run(main)
"""


def test_an_estimator_trained_epoch_by_epoch_runs_the_epochs_times_the_computed_steps(tmp_path):
    make_job(tmp_path, {"train_digits.py": ESTIMATOR_LOOP})
    f = analyze_code(tmp_path, "python train_digits.py --batch_size 96", use_llm=False).facts
    assert value(f, "train_steps") == 12 * (48000 // 96)
    assert value(f, "epochs") == 12  # the run states both
    assert value(f, "micro_batch_size") == 96


def test_a_per_epoch_count_taken_from_the_data_leaves_the_steps_unknown(tmp_path):
    make_job(tmp_path, {"fit_images.py": KERAS_FROM_DATA})
    f = analyze_code(tmp_path, "python fit_images.py", use_llm=False).facts
    assert value(f, "train_steps") is None
    assert value(f, "epochs") == 7


def test_a_per_epoch_count_that_only_feeds_a_schedule_is_not_the_run_length(tmp_path):
    make_job(tmp_path, {"fit_digits.py": SCHEDULE_ONLY})
    f = analyze_code(tmp_path, "python fit_digits.py", use_llm=False).facts
    assert value(f, "train_steps") is None
    assert value(f, "epochs") == 12


HPARAMS = """
    import tensorflow as tf

    hparams = tf.contrib.training.HParams(
        batch_size=48,
        decoder_layers=3,
        learning_rate=0.002,
    )
"""

TRAIN_WITH_HPARAMS = """
    import argparse
    from hparams import hparams

    def main():
        p = argparse.ArgumentParser()
        p.add_argument('--hparams', default='', help='comma-separated name=value pairs')
        p.add_argument('--log_dir', default='logs')
        args = p.parse_args()
        hparams.parse(args.hparams)
        feeder = Feeder(hparams.batch_size)
        run(feeder, hparams)

    if __name__ == '__main__':
        main()
"""


def test_an_hparams_string_on_the_command_line_overrides_the_declared_batch(tmp_path):
    make_job(tmp_path, {"hparams.py": HPARAMS, "train_voice.py": TRAIN_WITH_HPARAMS})
    f = analyze_code(tmp_path, 'python train_voice.py --hparams="decoder_layers=4,batch_size=20"',
                     use_llm=False).facts
    assert value(f, "global_batch_size") == 20
    g = analyze_code(tmp_path, "python train_voice.py", use_llm=False).facts
    assert value(g, "global_batch_size") == 48


def test_hparams_strings_split_into_pairs_and_keep_bracketed_lists_whole():
    assert split_pairs("a=1,b=[2,3],c=x") == [("a", "1"), ("b", "[2,3]"), ("c", "x")]
    assert split_pairs("'batch_size=16, outputs_per_step=2'") == [("batch_size", "16"), ("outputs_per_step", "2")]
    assert split_pairs("configs/base.yaml") is None
    assert split_pairs("") is None


BLOCKS = """
    from absl import app, flags
    import tensorflow as tf

    flags.DEFINE_integer('steps_per_epoch', 400, 'steps in each epoch')
    flags.DEFINE_integer('epochs', 25, 'epochs')
    FLAGS = flags.FLAGS

    def main(_):
        model = build()
        model.fit(endless_batches(), steps_per_epoch=FLAGS.steps_per_epoch, epochs=FLAGS.epochs)

    if __name__ == '__main__':
        app.run(main)
"""


def test_epochs_given_as_blocks_of_steps_leave_only_the_steps(tmp_path):
    make_job(tmp_path, {"fit_blocks.py": BLOCKS})
    f = analyze_code(tmp_path, "python fit_blocks.py", use_llm=False).facts
    assert value(f, "train_steps") == 400 * 25
    assert value(f, "epochs") is None  # an "epoch" here is 400 steps, not a pass over the data
