"""RL networks sized from the environment and the algorithm: the Nature CNN for Atari games, MLP actor-critics
for well-known vector-observation environments (hidden widths from the job's knobs or the algorithm's default)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.convnets import mlp_params, nature_cnn_params
from schedmate.codeprof.static.modelsize.rl_policies import atari_game, env_dims, mlp_policy_params
from tests.codeprof.codeprof_support import make_job


def test_environment_ids_of_gym_d4rl_bullet_and_control_suites_give_their_sizes():
    assert env_dims("Hopper-v4") == (11, 3, False)
    assert env_dims("hopper-medium-replay-v2") == (11, 3, False)
    assert env_dims("Walker2DBulletEnv-v0") == (22, 6, False)
    assert env_dims("walker_walk") == (24, 6, False)
    assert env_dims("LunarLander-v2") == (8, 4, True)
    assert env_dims("MyWarehouseEnv-v0") is None


def test_atari_ids_name_their_game_and_bare_game_names_need_an_atari_context():
    assert atari_game("SeaquestNoFrameskip-v4") == "seaquest"
    assert atari_game("ALE/Pong-v5") == "pong"
    assert atari_game("pong") is None
    assert atari_game("pong", atari_context=True) == "pong"


def test_an_off_policy_actor_critic_counts_the_actor_and_twin_critics_but_no_targets():
    # TD3 on an 11-observation, 3-action task with 300-wide layers
    want = mlp_params([11, 300, 300, 3]) + 2 * mlp_params([14, 300, 300, 1])
    assert mlp_policy_params(11, 3, False, "td3", (300, 300)) == want
    # PPO: Gaussian actor with a state-independent log std, and a value network (64x64 default)
    assert mlp_policy_params(8, 2, False, "ppo") == mlp_params([8, 64, 64, 2]) + 2 + mlp_params([8, 64, 64, 1])


ATARI_JOB = {
    "run_agent.py": """
        import argparse
        from rlkit_like import make_agent, make_env
        ap = argparse.ArgumentParser()
        ap.add_argument("--env", default="SeaquestNoFrameskip-v4")
        ap.add_argument("--batch_size", type=int, default=32)
        args = ap.parse_args()
        env = make_env(args.env)
        agent = make_agent("dqn", env)
    """,
}


def test_an_atari_job_without_its_own_cnn_is_the_nature_cnn_with_the_games_actions(tmp_path):
    make_job(tmp_path, ATARI_JOB)
    f = analyze_code(tmp_path, "python run_agent.py --env BreakoutNoFrameskip-v4", use_llm=False).facts
    assert f["params"].value == nature_cnn_params(4)


OWN_CNN_JOB = {
    "net.py": """
        import torch.nn as nn
        class Torso(nn.Module):
            def __init__(self, n_actions, hidden):
                super().__init__()
                self.c1 = nn.Conv2d(4, 16, 8, stride=4)
                self.fc = nn.Linear(hidden, n_actions)
    """,
    "run_agent.py": """
        import argparse, gym
        from net import Torso
        ap = argparse.ArgumentParser()
        ap.add_argument("--env", default="PongNoFrameskip-v4")
        args = ap.parse_args()
        env = gym.make(args.env)
        net = Torso(env.action_space.n, args.hidden)
    """,
}


def test_an_atari_job_that_writes_its_own_cnn_is_not_given_the_nature_cnn(tmp_path):
    make_job(tmp_path, OWN_CNN_JOB)
    f = analyze_code(tmp_path, "python run_agent.py", use_llm=False).facts
    assert f.get("params") is None or f["params"].value != nature_cnn_params(6)


MUJOCO_JOB = {
    "configs/sac_hopper.yaml": """
        env: hopper-medium-v2
        batch_size: 256
        hidden_dim: 512
        hidden_depth: 3
        max_steps: 100000
    """,
    "train_sac.py": """
        import yaml, gym
        cfg = yaml.safe_load(open("configs/sac_hopper.yaml"))
        env = gym.make(cfg["env"])
        agent = build_agent(env.observation_space, env.action_space, cfg)
    """,
}


def test_an_actor_critic_on_a_known_environment_uses_the_configured_hidden_widths(tmp_path):
    make_job(tmp_path, MUJOCO_JOB)
    f = analyze_code(tmp_path, "python train_sac.py", use_llm=False).facts
    assert f["params"].value == mlp_policy_params(11, 3, False, "sac", (512, 512, 512))


OWN_MLP_JOB = {
    "dqn_small.py": """
        import gym
        import torch.nn as nn
        class Q(nn.Module):
            def __init__(self, n_obs, n_act):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(n_obs, 48), nn.ReLU(), nn.Linear(48, n_act))
        env = gym.make("CartPole-v1")
        q = Q(env.observation_space.shape[0], env.action_space.n)
    """,
}


def test_a_network_written_in_the_entry_script_is_not_replaced_by_the_algorithms_default(tmp_path):
    make_job(tmp_path, OWN_MLP_JOB)
    f = analyze_code(tmp_path, "python dqn_small.py", use_llm=False).facts
    assert f.get("params") is None or f["params"].value != mlp_policy_params(4, 2, True, "dqn")
