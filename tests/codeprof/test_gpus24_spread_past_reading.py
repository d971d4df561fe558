"""A one-process job whose GPU count sits past the files the reader takes in, or in settings its trainer reads:
DataParallel two imports deep, a model spread with `device_map="auto"`, a Ray controller's
`trainer.n_gpus_per_node`, a Lightning `trainer.gpus=` override on the command line."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job


def gpus(res):
    f = res.facts.get("num_gpus")
    return None if f is None else f.value


# --- DataParallel in a module the entry's imports import -------------------------------------------------------

ENTRY = """
    import torch
    import engine

    def main():
        engine.train_loop(steps=5000)

    if __name__ == "__main__":
        main()
"""

ENGINE = """
    import torch
    from nets import builder

    def train_loop(steps):
        net = builder.make_net()
        opt = torch.optim.Adam(net.parameters(), lr=2e-4)
        for i in range(steps):
            loss = net(torch.randn(16, 3).cuda()).mean()
            opt.zero_grad(); loss.backward(); opt.step()
"""

BUILDER = """
    import torch

    def make_net():
        net = torch.nn.Sequential(torch.nn.Linear(3, 3)).cuda()
        net = torch.nn.DataParallel(net)
        return net
"""


def test_data_parallel_two_imports_deep_leaves_the_count_to_the_submission(tmp_path):
    make_job(tmp_path, {"run.py": ENTRY, "engine.py": ENGINE, "nets/__init__.py": "", "nets/builder.py": BUILDER})
    res = analyze_code(tmp_path, "python run.py", use_llm=False)
    assert gpus(res) is None
    assert any("DataParallel over every visible GPU" in n for n in res.warnings)


def test_the_visible_devices_the_submitter_sets_count_for_data_parallel_two_imports_deep(tmp_path):
    make_job(tmp_path, {"run.py": ENTRY, "engine.py": ENGINE, "nets/__init__.py": "", "nets/builder.py": BUILDER})
    assert gpus(analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1,2 python run.py", use_llm=False)) == 3


def test_a_deep_data_parallel_with_a_device_list_is_not_read_as_every_gpu(tmp_path):
    builder = BUILDER.replace("torch.nn.DataParallel(net)", "torch.nn.DataParallel(net, device_ids=[0])")
    make_job(tmp_path, {"run.py": ENTRY, "engine.py": ENGINE, "nets/__init__.py": "", "nets/builder.py": builder})
    res = analyze_code(tmp_path, "python run.py", use_llm=False)
    assert not any("DataParallel over every visible GPU" in n for n in res.warnings)
    assert gpus(res) == 1


def test_a_deep_data_parallel_beside_distributed_processes_is_left_to_the_launcher(tmp_path):
    builder = BUILDER + "\n\ndef wrap_ddp(net):\n    return torch.nn.parallel.DistributedDataParallel(net)\n"
    make_job(tmp_path, {"run.py": ENTRY, "engine.py": ENGINE, "nets/__init__.py": "", "nets/builder.py": builder})
    res = analyze_code(tmp_path, "python run.py", use_llm=False)
    assert not any("DataParallel over every visible GPU" in n for n in res.warnings)


# --- device_map="auto" ---------------------------------------------------------------------------------------

AUTO = """
    import argparse
    import torch
    from transformers import AutoModelForCausalLM

    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="acme/tiny-lm")
    parser.add_argument("--int8", action="store_true")
    parser.add_argument("--steps", type=int, default=300)
    args = parser.parse_args()

    model = AutoModelForCausalLM.from_pretrained(
        args.model, device_map="auto", load_in_8bit=args.int8,
        max_memory={i: "30GB" for i in range(torch.cuda.device_count())})
    opt = torch.optim.SGD(model.parameters(), lr=1e-6)
    for step in range(args.steps):
        loss = model(torch.zeros(1, 8, dtype=torch.long).cuda()).logits.mean()
        loss.backward(); opt.step()
"""


def test_a_model_spread_with_device_map_auto_in_one_process_is_not_one_gpu(tmp_path):
    make_job(tmp_path, {"tune.py": AUTO})
    res = analyze_code(tmp_path, "python tune.py", use_llm=False)
    assert gpus(res) is None
    assert any('device_map="auto"' in n for n in res.warnings)



AUTO_WITH_LOADER = AUTO.replace('    parser.add_argument("--steps", type=int, default=300)\n',
                                '    parser.add_argument("--steps", type=int, default=300)\n'
                                '    parser.add_argument("--batch_size", type=int, default=12)\n').replace(
    "    for step in range(args.steps):\n",
    "    loader = torch.utils.data.DataLoader(list(range(960)), batch_size=args.batch_size)\n"
    "    for step in range(args.steps):\n")


def test_a_model_spread_with_device_map_auto_is_one_replica_so_its_loader_batch_is_the_global_batch(tmp_path):
    make_job(tmp_path, {"tune.py": AUTO_WITH_LOADER})
    res = analyze_code(tmp_path, "python tune.py", use_llm=False)
    assert gpus(res) is None
    assert res.facts["micro_batch_size"].value == 12
    assert res.facts["global_batch_size"].value == 12

def test_a_quantized_auto_load_is_not_read_as_every_gpu(tmp_path):
    make_job(tmp_path, {"tune.py": AUTO})
    res = analyze_code(tmp_path, "python tune.py --int8", use_llm=False)
    assert not any('device_map="auto"' in n for n in res.warnings)


def test_a_max_memory_naming_one_device_is_not_read_as_every_gpu(tmp_path):
    make_job(tmp_path, {"tune.py": AUTO.replace('{i: "30GB" for i in range(torch.cuda.device_count())}',
                                                '{0: "30GB"}')})
    res = analyze_code(tmp_path, "python tune.py", use_llm=False)
    assert not any('device_map="auto"' in n for n in res.warnings)


# --- a Ray single controller's resource pool ----------------------------------------------------------------

CONTROLLER = """
    import ray
    from omegaconf import OmegaConf

    def main():
        cli = OmegaConf.from_cli()
        cfg = OmegaConf.merge(OmegaConf.load(cli.config), cli)
        pool = {"main": [cfg.trainer.n_gpus_per_node] * cfg.trainer.nnodes}
        ray.init()
        run_controller(cfg, pool)

    if __name__ == "__main__":
        main()
"""

POOL_YAML = """
    data:
      rollout_batch_size: 256
    trainer:
      total_epochs: 3
      nnodes: 2
      n_gpus_per_node: 4
"""


def test_a_ray_controller_takes_its_gpus_per_node_times_nodes_from_the_config(tmp_path):
    make_job(tmp_path, {"rl/main.py": CONTROLLER, "cfg/ppo.yaml": POOL_YAML})
    res = analyze_code(tmp_path, "python3 -m rl.main config=cfg/ppo.yaml", use_llm=False)
    assert gpus(res) == 8


def test_a_command_line_override_of_the_pool_wins(tmp_path):
    make_job(tmp_path, {"rl/main.py": CONTROLLER, "cfg/ppo.yaml": POOL_YAML})
    res = analyze_code(tmp_path, "python3 -m rl.main config=cfg/ppo.yaml trainer.n_gpus_per_node=2 "
                                 "trainer.nnodes=1", use_llm=False)
    assert gpus(res) == 2


def test_a_pool_setting_the_code_never_reads_decides_nothing(tmp_path):
    make_job(tmp_path, {"rl/main.py": CONTROLLER.replace("[cfg.trainer.n_gpus_per_node] * cfg.trainer.nnodes",
                                                         "[1]"), "cfg/ppo.yaml": POOL_YAML})
    res = analyze_code(tmp_path, "python3 -m rl.main config=cfg/ppo.yaml", use_llm=False)
    assert gpus(res) != 8


def test_a_deep_helper_beside_a_data_parallel_over_chosen_devices_decides_nothing(tmp_path):
    builder = BUILDER + "\n\ndef wrap_chosen(net, ids):\n    return torch.nn.DataParallel(net, device_ids=ids)\n"
    make_job(tmp_path, {"run.py": ENTRY, "engine.py": ENGINE, "nets/__init__.py": "", "nets/builder.py": builder})
    res = analyze_code(tmp_path, "python run.py", use_llm=False)
    assert not any("DataParallel over every visible GPU" in n for n in res.warnings)
