"""Launcher parsing, table-driven: each command line gives the nodes, processes per node and entry script."""

from __future__ import annotations

import pytest

from schedmate.codeprof.launcher import LaunchError, parse_launch
from schedmate.codeprof.reader import Workdir

from .codeprof_support import make_job

FILES = {
    "train.py": "import torch\n",
    "hostfile": "n1 slots=8\nn2 slots=8\nn3 slots=8\n",
    "acc.yaml": "distributed_type: FSDP\nnum_machines: 2\nnum_processes: 16\nmixed_precision: bf16\n",
    "run.sh": """
        #!/bin/bash
        NNODES=${NNODES:-2}
        GPUS=4
        export OMP_NUM_THREADS=4
        python prep.py --out data
        torchrun --nnodes $NNODES --nproc_per_node $GPUS train.py --lr 3e-4
    """,
    "job.slurm": """
        #!/bin/bash
        #SBATCH --nodes=3
        #SBATCH --ntasks-per-node=4
        #SBATCH --gres=gpu:4
        srun python train.py
    """,
    "arr.sh": """
        ARGS=(
            --tensor-model-parallel-size 2
            --micro-batch-size 4
        )
        torchrun --nproc_per_node 8 train.py "${ARGS[@]}" --bf16
    """,
}

CASES = [
    # command, chain, num_nodes, procs_per_node, num_procs, script, first args
    ("python train.py --lr 1e-3", ["python"], 1, 1, 1, "train.py", ["--lr", "1e-3"]),
    ("python3 -u train.py", ["python"], 1, 1, 1, "train.py", []),
    ("torchrun --nproc_per_node=8 train.py --bs 4", ["torchrun"], 1, 8, 8, "train.py", ["--bs", "4"]),
    (
        "torchrun --nnodes 2 --nproc-per-node 4 --rdzv_endpoint h:29500 train.py",
        ["torchrun"],
        2,
        4,
        8,
        "train.py",
        [],
    ),
    ("torchrun --standalone --nproc_per_node gpu train.py", ["torchrun"], 1, None, None, "train.py", []),
    (
        "python -m torch.distributed.run --nproc_per_node 4 --nnodes 1 train.py -x",
        ["python -m torch.distributed.run"],
        1,
        4,
        4,
        "train.py",
        ["-x"],
    ),
    (
        "python -m torch.distributed.launch --nproc_per_node 2 train.py",
        ["python -m torch.distributed.launch"],
        1,
        2,
        2,
        "train.py",
        [],
    ),
    (
        "deepspeed --num_gpus 8 train.py --deepspeed_config ds.json",
        ["deepspeed"],
        1,
        8,
        8,
        "train.py",
        ["--deepspeed_config", "ds.json"],
    ),
    ("deepspeed --hostfile hostfile train.py", ["deepspeed"], 3, 8, 24, "train.py", []),
    (
        "deepspeed --hostfile hostfile --num_nodes 2 --num_gpus 4 train.py",
        ["deepspeed"],
        2,
        4,
        8,
        "train.py",
        [],
    ),
    ("deepspeed --include localhost:0,1,2,3 train.py", ["deepspeed"], 1, 4, 4, "train.py", []),
    ("accelerate launch --num_processes 8 --multi_gpu train.py", ["accelerate"], 1, 8, 8, "train.py", []),
    ("accelerate launch --config_file acc.yaml train.py", ["accelerate"], 2, 8, 16, "train.py", []),
    ("srun -N 4 --ntasks-per-node=8 python train.py", ["srun", "python"], 4, 8, 32, "train.py", []),
    (
        "srun -N2 --gpus-per-node=8 torchrun --nnodes 2 --nproc_per_node 8 train.py",
        ["srun", "torchrun"],
        2,
        8,
        16,
        "train.py",
        [],
    ),
    (
        "mpirun -np 16 -H a:8,b:8 -x NCCL_DEBUG=INFO -mca btl ^openib python train.py",
        ["mpirun", "python"],
        2,
        8,
        16,
        "train.py",
        [],
    ),
    ("mpiexec -n 24 --hostfile hostfile python train.py", ["mpiexec", "python"], 3, 8, 24, "train.py", []),
    ("bash run.sh", ["sh:run.sh", "torchrun"], 2, 4, 8, "train.py", ["--lr", "3e-4"]),
    ("NNODES=5 bash run.sh", ["sh:run.sh", "torchrun"], 5, 4, 20, "train.py", ["--lr", "3e-4"]),
    ("sbatch job.slurm", ["sh:job.slurm", "sbatch", "srun", "python"], 3, 4, 12, "train.py", []),
    (
        "bash arr.sh",
        ["sh:arr.sh", "torchrun"],
        1,
        8,
        8,
        "train.py",
        ["--tensor-model-parallel-size", "2", "--micro-batch-size", "4", "--bf16"],
    ),
    (
        "cd . && nohup env OMP_NUM_THREADS=2 torchrun --nproc_per_node 2 train.py",
        ["torchrun"],
        1,
        2,
        2,
        "train.py",
        [],
    ),
]


@pytest.mark.parametrize("command,chain,nodes,ppn,total,script,args", CASES, ids=[c[0][:60] for c in CASES])
def test_each_launcher_command_gives_nodes_processes_and_the_entry_script(
    tmp_path, command, chain, nodes, ppn, total, script, args
):
    wd = Workdir(make_job(tmp_path, FILES))
    L = parse_launch(command, wd)
    assert L.chain == chain
    assert L.get("num_nodes") == nodes
    assert L.get("procs_per_node") == ppn
    assert L.get("num_procs") == total
    assert L.script == script
    assert L.args[: len(args)] == args


def test_a_wrapper_script_value_carries_the_line_of_its_variable(tmp_path):
    wd = Workdir(make_job(tmp_path, FILES))
    L = parse_launch("bash run.sh", wd)
    where = L.settings["num_nodes"].where
    assert "run.sh:6" in where and "run.sh:2" in where  # the torchrun line and NNODES=...


def test_python_dash_c_is_refused_with_a_clear_message(tmp_path):
    with pytest.raises(LaunchError, match="inline code"):
        parse_launch("python -c 'print(1)'", Workdir(make_job(tmp_path, FILES)))


def test_a_missing_wrapper_script_names_the_file(tmp_path):
    with pytest.raises(LaunchError, match="nope.sh"):
        parse_launch("bash nope.sh", Workdir(make_job(tmp_path, FILES)))


def test_paddles_launcher_starts_one_process_per_listed_gpu(tmp_path):
    from schedmate.codeprof.launch import parse_launch
    from schedmate.codeprof.reader import Workdir

    (tmp_path / "train.py").write_text("import paddle\n")
    L = parse_launch("python -m paddle.distributed.launch --gpus=0,1,2,3 train.py -c cfg.yaml", Workdir(tmp_path))
    assert L.get("procs_per_node") == 4 and L.script == "train.py" and L.args == ["-c", "cfg.yaml"]
    L = parse_launch("python -m paddle.distributed.launch train.py", Workdir(tmp_path))
    assert L.get("procs_per_node") is None and "procs_per_node" in L.unknown
