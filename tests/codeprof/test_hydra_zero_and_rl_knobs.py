"""Hydra 0.x entries (`@hydra.main(config_path='config/train.yaml', strict=True)`: the path names the primary
config, and a group's config merges at the top level), and RL update periods that are no accumulation."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

FILES = {
    "train.py": """
        import hydra
        import torch

        class Workspace:
            def __init__(self, cfg):
                self.device = torch.device(cfg.device)
                self.agent = hydra.utils.instantiate(cfg.agent)

        @hydra.main(config_path="config/train.yaml", strict=True)
        def main(cfg):
            Workspace(cfg).run()

        if __name__ == "__main__":
            main()
    """,
    "config/train.yaml": "defaults:\n  - agent: ddpg\n\nenv: walker_walk\ndevice: cuda\n",
    "config/agent/ddpg.yaml": """
        agent:
          name: ddpg
          class: agents.ddpg.DDPGAgent
          params:
            batch_size: 512
            actor_update_frequency: 2
            critic_target_update_frequency: 2
    """,
    "config/agent/td3.yaml": "agent:\n  name: td3\n  params:\n    batch_size: 256\n",
}


def test_a_hydra_zero_config_path_names_the_primary_file_and_groups_merge_at_the_top(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python train.py env=cheetah_run", use_llm=False).facts
    assert f["micro_batch_size"].value == 512


def test_a_group_choice_on_the_command_line_picks_the_other_file(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python train.py agent=td3", use_llm=False).facts
    assert f["micro_batch_size"].value == 256


def test_rl_update_periods_are_no_gradient_accumulation(tmp_path):
    make_job(tmp_path, FILES)
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["global_batch_size"].value == 512  # one process, nothing accumulates


def test_an_update_count_used_inside_the_collection_loop_is_per_iteration_not_the_runs_length(tmp_path):
    make_job(tmp_path, {"train.py": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--frames_per_batch", type=int, default=1000)
        p.add_argument("--utd_ratio", type=float, default=1.0)
        p.add_argument("--batch_size", type=int, default=256)

        def main():
            args = p.parse_args()
            num_updates = int(args.frames_per_batch * args.utd_ratio)
            for data in collector:
                buffer.extend(data)
                for _ in range(num_updates):
                    update(buffer.sample(args.batch_size))

        if __name__ == "__main__":
            main()
    """})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert "train_steps" not in f or f["train_steps"].value is None


def test_an_off_policy_loop_that_updates_after_a_warm_up_trains_for_the_rest_of_its_steps(tmp_path):
    make_job(tmp_path, {"main.py": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--max_timesteps", type=float, default=3e5)
        p.add_argument("--start_timesteps", type=int, default=25000)
        p.add_argument("--batch_size", type=int, default=100)
        args = p.parse_args()
        for t in range(int(args.max_timesteps)):
            action = act(state)
            if t >= args.start_timesteps:
                policy.train(buffer, args.batch_size)
    """})
    f = analyze_code(tmp_path, "python main.py --max_timesteps 1e6", use_llm=False).facts
    assert f["train_steps"].value == 975000


def test_a_while_loop_with_several_updates_per_step_counts_each(tmp_path):
    make_job(tmp_path, {"train.py": """
        import argparse
        p = argparse.ArgumentParser()
        p.add_argument("--num_steps", type=int, default=10000)
        p.add_argument("--seed_steps", type=int, default=1000)
        p.add_argument("--updates_per_step", type=int, default=2)

        class Runner:
            def run(self, args):
                self.step = 0
                while self.step < args.num_steps:
                    if self.step >= args.seed_steps:
                        for _ in range(args.updates_per_step):
                            self.agent.update(self.buffer)
                    self.step += 1

        if __name__ == "__main__":
            Runner().run(p.parse_args())
    """})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["train_steps"].value == 18000
