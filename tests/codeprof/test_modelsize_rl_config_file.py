"""RL networks whose algorithm is named only by the config file an absl entry script loads by default, and the
REDQ ensemble (ten Q-networks)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.rl_policies import mlp_policy_params
from tests.codeprof.codeprof_support import make_job

ABSL_JOB = {
    "run_agent.py": """
        from absl import app, flags
        from ml_collections import config_flags

        FLAGS = flags.FLAGS
        flags.DEFINE_string('env_name', 'Walker2d-v3', 'Environment.')
        flags.DEFINE_integer('max_steps', 500000, 'Steps.')
        flags.DEFINE_integer('batch_size', 128, 'Batch.')
        config_flags.DEFINE_config_file('config', 'presets/sac_small.py', 'Hyper-parameters.')

        def main(_):
            kwargs = dict(FLAGS.config)
            for i in range(FLAGS.max_steps):
                pass

        app.run(main)
    """,
    "presets/sac_small.py": """
        import ml_collections

        def get_config():
            c = ml_collections.ConfigDict()
            c.actor_lr = 3e-4
            return c
    """,
}


def test_the_algorithm_named_by_the_default_config_file_sizes_the_networks(tmp_path):
    make_job(tmp_path, ABSL_JOB)
    f = analyze_code(tmp_path, "python run_agent.py --env_name=Hopper-v2", use_llm=False).facts
    # Hopper: 11 observations, 3 actions; SAC's actor (mean and log-std heads) and two Q-networks over 256-256
    actor = (11 * 256 + 256) + (256 * 256 + 256) + (256 * 6 + 6)
    critics = 2 * ((14 * 256 + 256) + (256 * 256 + 256) + (256 + 1))
    assert f["params"].value == actor + critics == 210_184


def test_redq_counts_an_ensemble_of_ten_q_networks():
    one_q = (14 * 256 + 256) + (256 * 256 + 256) + (256 + 1)
    actor = (11 * 256 + 256) + (256 * 256 + 256) + (256 * 6 + 6)
    assert mlp_policy_params(11, 3, False, "redq") == actor + 10 * one_q


ENV_SIZED = {
    "qlearn.py": """
        import gym
        import torch.nn as nn

        class QNet(nn.Module):
            def __init__(self, n_obs, n_act):
                super().__init__()
                self.h = nn.Linear(n_obs, 48)
                self.q = nn.Linear(48, n_act)

        env = gym.make('LunarLander-v2')
        qnet = QNet(env.observation_space.shape[0], env.action_space.n)
        for ep in range(200):
            pass
    """,
}


def test_a_network_sized_from_a_known_environments_spaces_is_counted(tmp_path):
    make_job(tmp_path, ENV_SIZED)
    f = analyze_code(tmp_path, "python qlearn.py", use_llm=False).facts
    assert f["params"].value == (8 * 48 + 48) + (48 * 4 + 4)  # LunarLander: 8 observations, 4 actions


def test_an_unknown_environment_leaves_such_a_network_uncounted(tmp_path):
    make_job(tmp_path, {"qlearn.py": ENV_SIZED["qlearn.py"].replace("LunarLander-v2", "MyMaze-v0")})
    got = analyze_code(tmp_path, "python qlearn.py", use_llm=False).facts.get("params")
    assert got is None or got.value != (8 * 48 + 48) + (48 * 4 + 4)
