"""An sbatch script that starts one `srun` step of one node per allocated node, side by side, runs one job over
all those nodes: its GPU count is the nodes times each node's GPUs, not one node's."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

SPAWN_JOB = """
    import argparse
    import torch
    import torch.multiprocessing as mp
    import torch.distributed as dist

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=6)
    p.add_argument("--world_size", type=int)
    p.add_argument("--node_rank", type=int, default=0)
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()

    def worker(gpu, per_node, args):
        rank = args.node_rank * per_node + gpu
        dist.init_process_group("nccl", rank=rank, world_size=args.world_size)
        data = list(range(5000))
        sampler = torch.utils.data.distributed.DistributedSampler(data)
        loader = torch.utils.data.DataLoader(data, batch_size=args.batch_size, sampler=sampler)
        model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda(gpu), device_ids=[gpu])
        for epoch in range(args.epochs):
            for batch in loader:
                model(batch).sum().backward()

    if __name__ == "__main__":
        per_node = torch.cuda.device_count()
        mp.spawn(worker, nprocs=per_node, args=(per_node, args))
"""

STEPS_SBATCH = """
    #!/bin/bash
    #SBATCH --nodes=3
    #SBATCH --ntasks=3
    #SBATCH --gres=gpu:2
    PER_NODE=$SLURM_GPUS_ON_NODE
    TOTAL=$(($PER_NODE*$SLURM_NNODES))
    for (( i=0; i < $SLURM_NTASKS; ++i ))
    do
        srun -N 1 -n 1 {relative} --gres=gpu:2 bash -c "python spawn_train.py --batch_size 6 --world_size ${{TOTAL}} --node_rank ${{i}}" &
    done
    wait
"""


def test_srun_steps_of_one_node_started_side_by_side_are_the_jobs_nodes(tmp_path):
    make_job(tmp_path, {"spawn_train.py": SPAWN_JOB, "run.sh": STEPS_SBATCH.format(relative="-r $i")})
    res = analyze_code(tmp_path, "sbatch run.sh", use_llm=False)
    assert res.value("num_nodes") == 3
    assert res.value("num_gpus") == 6
    assert res.value("micro_batch_size") == 6
    assert res.value("global_batch_size") == 36


def test_one_node_steps_as_many_as_the_allocations_nodes_count_without_a_relative_offset(tmp_path):
    make_job(tmp_path, {"spawn_train.py": SPAWN_JOB, "run.sh": STEPS_SBATCH.format(relative="")})
    res = analyze_code(tmp_path, "sbatch run.sh", use_llm=False)
    assert res.value("num_gpus") == 6


def test_one_srun_step_on_one_node_stays_one_node(tmp_path):
    one = STEPS_SBATCH.format(relative="").replace("for (( i=0; i < $SLURM_NTASKS; ++i ))", "for i in 0")
    make_job(tmp_path, {"spawn_train.py": SPAWN_JOB, "run.sh": one})
    res = analyze_code(tmp_path, "sbatch run.sh", use_llm=False)
    assert res.value("num_gpus") == 2
