"""RL networks sized from a `suite:task` environment id and the widths a network factory is called with; a
class whose base the interpreter cannot follow does not stop the analysis."""

from __future__ import annotations

import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.rl_policies import env_dims, mlp_policy_params


def test_a_suite_prefix_before_the_task_is_read_through() -> None:
    assert env_dims("gym:Hopper-v2") == env_dims("Hopper-v3") == (11, 3, False)
    assert env_dims("control:walker-walk") == env_dims("walker_walk")


def test_the_widths_a_network_factory_is_called_with_size_the_policy(tmp_path: Path) -> None:
    (tmp_path / "run_td3.py").write_text(textwrap.dedent("""
        from absl import app, flags
        from rlkit.agents import td3
        from rlkit import envs

        FLAGS = flags.FLAGS
        flags.DEFINE_string("env_name", "gym:Hopper-v2", "which environment")

        def build():
            env = envs.make_environment(FLAGS.env_name)
            return td3.make_networks(env.spec, hidden_layer_sizes=(128, 128))

        def main(_):
            nets = build()
            td3.train(nets, batch_size=64)

        if __name__ == "__main__":
            app.run(main)
    """))
    got = analyze_code(tmp_path, "python run_td3.py", use_llm=False).facts["params"].value
    assert got == mlp_policy_params(11, 3, False, "td3", [128, 128])


def test_a_class_over_an_unfollowable_generic_base_is_skipped_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(textwrap.dedent("""
        import torch
        from vendorlib import typing_ext

        class Learner(typing_ext.Generic[int]):
            def __init__(self, width):
                self.width = width

        def main():
            learner = Learner(64)
            for step in range(1000):
                learner.step()

        main()
    """))
    prof = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert prof.value("params") is None
