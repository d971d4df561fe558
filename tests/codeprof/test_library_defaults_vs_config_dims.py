"""A library module's own small default config (`dict(num_layers=1, ...)` for its tests) does not replace the
model dimensions the job's config file names."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job


def test_a_library_default_dict_does_not_shrink_the_configured_model(tmp_path):
    make_job(tmp_path, {
        "proj/main.py": """
            from absl import app, flags
            from ml_collections import config_flags
            import jax
            from proj import model
            config_flags.DEFINE_config_file("config", None, "config")
            FLAGS = flags.FLAGS

            def main(argv):
                net = model.ViTClassifier(FLAGS.config)
                for step in range(FLAGS.config.num_training_steps):
                    pass

            if __name__ == "__main__":
                app.run(main)
        """,
        "proj/model.py": """
            import ml_collections

            class ViTClassifier:
                def default_model_config(self):
                    return ml_collections.ConfigDict({"model": dict(num_heads=2, num_layers=1, hidden_size=16,
                                                                    mlp_dim=32)})
        """,
        "proj/configs/vit_b.py": """
            import ml_collections

            def get_config():
                config = ml_collections.ConfigDict()
                config.model_name = "vit_classifier"
                config.model = ml_collections.ConfigDict()
                config.model.num_layers = 12
                config.model.hidden_size = 768
                config.model.mlp_dim = 3072
                config.model.num_heads = 12
                config.batch_size = 4096
                config.num_training_steps = 90000
                return config
        """,
    })
    f = analyze_code(tmp_path, "python proj/main.py --config=proj/configs/vit_b.py", use_llm=False).facts
    assert 70e6 < f["params"].value < 100e6  # ViT-B/16-sized, not the one-layer test default
