"""mmengine templates (mmpretrain, mmdet): a train tool and a Python config file."""

from __future__ import annotations

from collections.abc import Callable

from schedmate.semantic.catalogue.base import Params, _sub, torchrun

_MM_TRAIN = '''"""Train a model from an mmengine config file."""
import argparse
import os

import torch
from mmengine.config import Config
from mmengine.runner import Runner


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--launcher", default="none", choices=["none", "pytorch", "slurm"])
    ap.add_argument("--work-dir")
    args = ap.parse_args()
    if args.launcher != "none":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.work_dir:
        cfg.work_dir = args.work_dir
    Runner.from_cfg(cfg).train()


if __name__ == "__main__":
    main()
'''

_MM_CONFIG = '''# <<desc>>
model = dict(
    type="<<mtype>>",
    backbone=dict(type="<<backbone>>", depth=<<depth>>),
    <<head>>)
train_dataloader = dict(batch_size=<<mbs>>, num_workers=8,
                        dataset=dict(type="<<dataset>>", data_root="/data/<<root>>", split="train"))
val_dataloader = dict(batch_size=<<mbs>>, num_workers=8,
                      dataset=dict(type="<<dataset>>", data_root="/data/<<root>>", split="val"))
optim_wrapper = dict(type="AmpOptimWrapper", optimizer=dict(type="SGD", lr=<<lr>>, momentum=0.9, weight_decay=1e-4))
max_epochs = <<epochs>>
param_scheduler = dict(type="MultiStepLR", by_epoch=True, milestones=[<<m1>>, <<m2>>], gamma=0.1)
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=max_epochs, val_interval=1)
default_hooks = dict(logger=dict(type="LoggerHook", interval=<<log>>),
                     checkpoint=dict(type="CheckpointHook", interval=1))
'''


def _mmengine(mtype: str, backbone: str, depth: int, head: str, dataset: str, root: str,
              cfg: str) -> Callable[[Params], dict[str, str]]:
    def render(p: Params) -> dict[str, str]:
        e = p.epochs or 1
        conf = _sub(_MM_CONFIG, desc=f"{cfg}: {p.num_gpus} GPU(s) x {p.micro_batch} images", mtype=mtype,
                    backbone=backbone, depth=depth, head=head, mbs=p.micro_batch, dataset=dataset, root=root,
                    lr=f"{p.lr:g}", m1=max(1, e * 2 // 3), m2=max(1, e * 8 // 9), epochs=e, log=p.log_every)
        cmd = torchrun(p, f"tools/train.py configs/{cfg}.py --launcher pytorch")
        if p.num_gpus == 1:
            cmd = f"torchrun --nproc_per_node=1 tools/train.py configs/{cfg}.py --launcher pytorch"
        return {"tools/train.py": _MM_TRAIN, f"configs/{cfg}.py": conf, "command.txt": cmd + "\n"}
    return render
