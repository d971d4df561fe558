"""A job's own helpers are read for what they do: its launcher function, its config classes, its installed
module names and a batch it divides over the processes."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

FILES = {
    "setup.py": 'import setuptools\nsetuptools.setup(name="det", package_dir={"det.tools": "tools"})\n',
    "tools/train.py": """\
import argparse
from det.core import launch
from det.exp import get_exp

p = argparse.ArgumentParser()
p.add_argument("-b", "--batch-size", type=int, default=64)
p.add_argument("-d", "--devices", type=int, default=None)
p.add_argument("-f", "--exp_file", type=str, default=None)
p.add_argument("--num_machines", type=int, default=1)

if __name__ == "__main__":
    args = p.parse_args()
    exp = get_exp(args.exp_file)
    num_gpu = count_devices() if args.devices is None else args.devices
    launch(main, num_gpu, args.num_machines, args=(exp, args))
""",
    "det/__init__.py": "",
    "det/core/__init__.py": "from .launch import launch\n",
    "det/core/launch.py": """\
import torch.multiprocessing as mp


def launch(main_func, num_gpus_per_machine, num_machines=1, args=()):
    world_size = num_machines * num_gpus_per_machine
    if world_size > 1:
        mp.start_processes(worker, nprocs=num_gpus_per_machine, args=(main_func, args))
    else:
        main_func(*args)
""",
    "det/exp/__init__.py": "from .base import Exp, get_exp\n",
    "det/exp/base.py": """\
import torch.distributed as dist


class Exp:
    def __init__(self):
        self.max_epoch = 300
        self.depth = 1.0

    def get_data_loader(self, batch_size):
        batch_size = batch_size // dist.get_world_size()
        return make_loader(batch_size)
""",
    "exps/small.py": """\
from det.exp import Exp as BaseExp


class Exp(BaseExp):
    def __init__(self):
        super().__init__()
        self.max_epoch = 80
""",
}


def job(tmp_path: Path) -> Path:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return tmp_path


def test_the_jobs_own_launcher_function_gives_the_processes_it_spawns(tmp_path):
    f = analyze_code(job(tmp_path), "python -m det.tools.train -d 8 -b 64", use_llm=False).facts
    assert f["num_gpus"].value == 8  # launch(main, num_gpu, ...) -> start_processes(nprocs=num_gpus_per_machine)
    # get_data_loader divides the batch by the world size: -b is the total
    assert f["global_batch_size"].value == 64 and f["micro_batch_size"].value == 8
    assert f["epochs"].value == 300  # Exp.__init__ of the base config class


def test_a_config_class_file_named_on_the_command_line_overrides_its_base_class(tmp_path):
    f = analyze_code(job(tmp_path), "python tools/train.py -f exps/small.py -d 4 -b 32", use_llm=False).facts
    assert f["epochs"].value == 80
    assert f["num_gpus"].value == 4 and f["micro_batch_size"].value == 8


def test_without_a_device_count_the_gpus_stay_open(tmp_path):
    p = analyze_code(job(tmp_path), "python tools/train.py -b 64", use_llm=False)
    assert p.facts.get("num_gpus") is None and p.facts.get("micro_batch_size") is None
    assert p.facts["global_batch_size"].value == 64


def test_a_configured_batch_the_loader_splits_over_the_gpus_is_the_total(tmp_path):
    files = {
        "tools/run_net.py": "from net.config import get_cfg\nfrom net.datasets import loader\n\n"
                            "def main():\n    cfg = get_cfg()\n",
        "net/__init__.py": "",
        "net/config.py": "from yacs.config import CfgNode as CN\n_C = CN()\n_C.NUM_GPUS = 1\n_C.TRAIN = CN()\n"
                         "_C.TRAIN.BATCH_SIZE = 64\n_C.SOLVER = CN()\n_C.SOLVER.MAX_EPOCH = 300\n",
        "net/datasets/__init__.py": "",
        "net/datasets/loader.py": "def construct_loader(cfg):\n"
                                  "    batch_size = int(cfg.TRAIN.BATCH_SIZE / max(1, cfg.NUM_GPUS))\n"
                                  "    return make(batch_size)\n",
        "configs/run.yaml": "TRAIN:\n  BATCH_SIZE: 32\nNUM_GPUS: 8\nSOLVER:\n  MAX_EPOCH: 50\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    f = analyze_code(tmp_path, "python tools/run_net.py --cfg configs/run.yaml", use_llm=False).facts
    assert f["global_batch_size"].value == 32 and f["epochs"].value == 50


def test_unlisted_names_of_a_kind_are_read_when_they_agree_and_look_alikes_are_not(tmp_path):
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
        "p.add_argument('--nb_epoch', type=int, default=120)\np.add_argument('--imgs_per_gpu', type=int, default=6)\n"
        "p.add_argument('--warmup_epochs', type=int, default=5)\np.add_argument('--val_imgs_per_gpu', type=int, default=1)\n"
        "args = p.parse_args()\nmodel = Net().cuda()\n")
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["epochs"].value == 120 and f["micro_batch_size"].value == 6
    (tmp_path / "train.py").write_text(
        "import argparse\np = argparse.ArgumentParser()\np.add_argument('--n_iters', type=int, default=1000)\n"
        "p.add_argument('--niter', type=int, default=5000)\n")
    assert analyze_code(tmp_path, "python train.py", use_llm=False).facts.get("train_steps") is None  # they disagree


def test_a_config_object_the_code_overwrites_at_run_time_is_not_read_from_the_file(tmp_path):
    (tmp_path / "config.json").write_text('{"num_gpus": 0, "batch_size": 16, "training_epochs": 3100}\n')
    (tmp_path / "train.py").write_text(
        "import argparse, json\nimport torch\nimport torch.multiprocessing as mp\n\n\ndef train(rank, h):\n"
        "    trainset = Mel(h)\n"
        "    loader = torch.utils.data.DataLoader(trainset, batch_size=h.batch_size)\n"
        "    val = torch.utils.data.DataLoader(validset, batch_size=1)\n\n\ndef main():\n"
        "    p = argparse.ArgumentParser()\n    p.add_argument('--config')\n    a = p.parse_args()\n"
        "    h = AttrDict(json.loads(open(a.config).read()))\n    if torch.cuda.is_available():\n"
        "        h.num_gpus = torch.cuda.device_count()\n        h.batch_size = int(h.batch_size / h.num_gpus)\n"
        "    if h.num_gpus > 1:\n        mp.spawn(train, nprocs=h.num_gpus, args=(h,))\n")
    f = analyze_code(tmp_path, "python train.py --config config.json", use_llm=False).facts
    assert f.get("num_gpus") is None  # device_count() at run time, not the file's 0
    assert f["global_batch_size"].value == 16 and f.get("micro_batch_size") is None  # split over the GPUs


def test_a_launcher_function_that_starts_processes_in_a_loop_or_over_a_config_value_is_counted(tmp_path):
    files = {
        "tools/run_net.py": "from core import dist\nfrom core.config import cfg\n\n"
                            "dist.multi_proc_run(num_proc=cfg.NUM_GPUS, fun=train)\nlaunch_job(cfg, train)\n",
        "core/__init__.py": "",
        "core/dist.py": "import torch.multiprocessing as mp\n\n\ndef multi_proc_run(num_proc, fun):\n"
                        "    for i in range(num_proc):\n        p = mp.Process(target=run, args=(i, fun))\n"
                        "        p.start()\n",
        "core/config.py": "from yacs.config import CfgNode as CN\n_C = CN()\ncfg = _C\n_C.NUM_GPUS = 1\n",
        "run.yaml": "NUM_GPUS: 8\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    f = analyze_code(tmp_path, "python tools/run_net.py --cfg run.yaml", use_llm=False).facts
    assert f["num_gpus"].value == 8


def test_an_unambiguous_prefix_of_a_long_option_is_that_option_as_argparse_reads_it(tmp_path):
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--batch-size', type=int, default=4)\n"
        "p.add_argument('--epochs', type=int, default=300)\np.add_argument('--epoch-start', type=int, default=0)\n"
        "args = p.parse_args()\nmodel.cuda()\n")
    f = analyze_code(tmp_path, "python train.py --batch 32 --epochs 10", use_llm=False).facts
    assert f["micro_batch_size"].value == 32 and f["epochs"].value == 10
    f = analyze_code(tmp_path, "python train.py --epoch 5", use_llm=False).facts  # --epochs or --epoch-start?
    assert f["epochs"].value == 300


def test_a_json_file_of_training_arguments_named_on_the_command_line_is_read(tmp_path):
    (tmp_path / "args").mkdir()
    (tmp_path / "args" / "sft.json").write_text('{"per_device_train_batch_size": 1, "gradient_accumulation_steps": 16,'
                                                ' "num_train_epochs": 1}\n')
    (tmp_path / "train.py").write_text(
        "import argparse\nfrom transformers import TrainingArguments, HfArgumentParser, Trainer\n"
        "p = argparse.ArgumentParser()\np.add_argument('--train_args_file')\n"
        "hf = HfArgumentParser((TrainingArguments,))\ntrainer = Trainer(model=model, args=args)\n")
    f = analyze_code(tmp_path, "python train.py --train_args_file args/sft.json", use_llm=False).facts
    assert f["micro_batch_size"].value == 1 and f["epochs"].value == 1 and f["grad_accum_steps"].value == 16


def test_devices_listed_on_the_command_line_are_the_processes_the_script_starts_for_them(tmp_path):
    (tmp_path / "main.py").write_text(
        "import argparse\nimport torch.multiprocessing as mp\np = argparse.ArgumentParser()\n"
        "p.add_argument('--devices', type=str, nargs='+', default=['cuda:0'])\n"
        "p.add_argument('--batch-size', type=int, default=64)\n\n\ndef worker(rank, n):\n"
        "    loader = DataLoader(ds, batch_size=args.batch_size, sampler=DistributedSampler(ds))\n\n\n"
        "if __name__ == '__main__':\n    args = p.parse_args()\n    n = len(args.devices)\n"
        "    for rank in range(n):\n        mp.Process(target=worker, args=(rank, n)).start()\n")
    f = analyze_code(tmp_path, "python main.py --devices cuda:0 cuda:1 cuda:2", use_llm=False).facts
    assert f["num_gpus"].value == 3 and f["global_batch_size"].value == 192
    f = analyze_code(tmp_path, "python main.py", use_llm=False).facts
    assert f["num_gpus"].value == 1


def test_a_comma_separated_gpu_list_split_in_code_sets_the_spawned_processes(tmp_path):
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\nimport torch.multiprocessing as mp\n\n\ndef run(rank, n, devices):\n"
        "    model = Net().to(devices[rank])\n    for epoch in range(12):\n        for batch in loader:\n"
        "            pass\n\n\np = argparse.ArgumentParser()\np.add_argument('--gpu', type=str, default='0')\n"
        "args = p.parse_args()\ndevices = list(map(int, args.gpu.split(',')))\nnprocs = len(devices)\n"
        "mp.spawn(run, args=(nprocs, devices), nprocs=nprocs)\n")
    f = analyze_code(tmp_path, "python train.py --gpu 0,1,2,3", use_llm=False).facts
    assert f["num_gpus"].value == 4
    assert f["epochs"].value == 12 and f["epochs"].evidence == ["train.py:8"]


def test_a_setting_the_entry_script_overwrites_in_the_branch_the_run_takes_is_the_one_used(tmp_path):
    (tmp_path / "train.py").write_text(
        "import argparse\nimport torch\np = argparse.ArgumentParser()\n"
        "p.add_argument('--dataset', default='cifar10')\np.add_argument('--batch_size', type=int, default=128)\n"
        "p.add_argument('--epochs', type=int, default=100)\n\n\ndef main():\n    args = p.parse_args()\n"
        "    if args.dataset == 'imagenet':\n        args.batch_size = 64\n        args.epochs = 800\n"
        "    elif args.dataset == 'stl10':\n        args.batch_size = 32\n    model.cuda()\n\n\nmain()\n")
    f = analyze_code(tmp_path, "python train.py --dataset imagenet", use_llm=False).facts
    assert f["micro_batch_size"].value == 64 and f["epochs"].value == 800
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 128 and f["epochs"].value == 100


def test_a_config_objects_fields_set_at_module_level_replace_the_librarys_defaults(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "__init__.py").write_text("")
    (tmp_path / "lib" / "config.py").write_text(
        "from dataclasses import dataclass\n\n\n@dataclass\nclass TrainConfig:\n    train_epochs: int = 100\n"
        "    train_micro_batch_size: int = 1\n    tp_size: int = 1\n")
    (tmp_path / "train.py").write_text(
        "import torch\nfrom lib.config import TrainConfig\nconfig = TrainConfig()\nconfig.tp_size = 2\n"
        "config.train_epochs = 3\nconfig.train_micro_batch_size = 8\n\n\ndef tweak(config):\n"
        "    config.train_epochs = 7  # a function the run may not call\n\n\ntrainer.train(model.cuda())\n")
    f = analyze_code(tmp_path, "torchrun --nproc_per_node 4 train.py", use_llm=False).facts
    assert f["epochs"].value == 3 and f["micro_batch_size"].value == 8
    assert f["global_batch_size"].value == 8 * 2  # 4 GPUs / tensor-parallel 2 = 2 data-parallel ranks


def test_a_plain_python_process_that_spawns_one_worker_per_visible_gpu_leaves_the_count_to_submission(tmp_path):
    (tmp_path / "main.py").write_text(
        "import torch\n\n\ndef worker(gpu, args):\n    model.cuda(gpu)\n\n\ndef main():\n"
        "    n = torch.cuda.device_count()\n    torch.multiprocessing.spawn(worker, (None,), n)\n\n\nmain()\n")
    f = analyze_code(tmp_path, "python main.py", use_llm=False).facts
    assert f.get("num_gpus") is None
    f = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python main.py", use_llm=False).facts
    assert f["num_gpus"].value == 2
