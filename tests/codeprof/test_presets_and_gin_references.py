"""A KerasHub preset names the pretrained model a task model starts from; a gin binding to a configurable
(`train.model = @models.Resnet50`) names the model."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job


def test_a_keras_preset_flag_names_the_model_before_the_task_class(tmp_path):
    make_job(tmp_path, {"bench.py": """
        from absl import app, flags
        import keras_hub
        flags.DEFINE_string("model", None, "Task class name.")
        flags.DEFINE_string("preset", None, "Preset to start from.")
        flags.DEFINE_integer("batch_size", 32, "Batch.")
        flags.DEFINE_integer("epochs", 2, "Epochs.")
        FLAGS = flags.FLAGS

        def main(_):
            model = getattr(keras_hub.models, FLAGS.model).from_preset(FLAGS.preset, num_classes=2)
            model.fit(train_ds.batch(FLAGS.batch_size), epochs=FLAGS.epochs)

        if __name__ == "__main__":
            app.run(main)
    """})
    f = analyze_code(tmp_path, "python bench.py --model=RobertaTextClassifier --preset=roberta_base_en",
                     use_llm=False).facts
    assert 120e6 <= f["params"].value <= 125e6  # RoBERTa-base


def test_a_gin_binding_to_a_model_configurable_names_the_model(tmp_path):
    make_job(tmp_path, {
        "tr/trainer.py": """
            import gin
            from absl import app, flags
            flags.DEFINE_string("config_file", None, "gin file")
            FLAGS = flags.FLAGS

            @gin.configurable
            def train(model=None, steps=1000):
                pass

            def main(_):
                gin.parse_config_file(FLAGS.config_file)
                train()

            if __name__ == "__main__":
                app.run(main)
        """,
        "tr/configs/rn.gin": "import tr.models\n\ntrain.model = @tr.models.Resnet50\ntrain.steps = 5000\n",
    })
    f = analyze_code(tmp_path, "python tr/trainer.py --config_file=tr/configs/rn.gin", use_llm=False).facts
    assert f["params"].value == 25.6e6
