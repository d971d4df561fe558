"""Helpers for the hand-written dataset jobs: a job is files + a command + labels.

Labels are written by hand for each job from what its command, code and configs fix. The two
derived scheduler fields follow the documented rule of the analyzer (catalogue of
`schedmate.workloads`, via the model family): a job on 0 or 1 GPU cannot be spread (sensitivity 0);
otherwise the family's published spread slowdown; `comm_heavy` is sensitivity >= 0.5.
"""

from __future__ import annotations

import textwrap
from typing import Any

from schedmate.records import sensitivity_from_slowdown
from schedmate.workloads import CATALOGUE

FAMILY_WORKLOAD = {
    "gpt": "gpt", "llama": "gpt", "mistral": "gpt", "bert": "bert", "t5": "transformer", "vit": "transformer",
    "resnet": "resnet50", "cnn": "resnet18", "unet": "cyclegan", "gan": "cyclegan", "dlrm": "recommendation",
    "rnn": "deepspeech2", "mlp": "a3c", "yolo": "yolov3",
}

JOBS: list[dict[str, Any]] = []


def dedent(s: str) -> str:
    return textwrap.dedent(s).lstrip("\n")


def job(name: str, command: str, files: dict[str, str], env: dict[str, str] | None = None,
        notes: str = "", **label: Any) -> None:
    lab: dict[str, Any] = {
        "framework": None, "model_family": None, "model_name": None, "params": None,
        "parallelism": {"data": None, "zero_stage": None, "tensor": 1, "pipeline": 1, "expert": 1, "context": 1},
        "num_nodes": None, "gpus_per_node": None, "num_gpus": None, "micro_batch_size": None,
        "global_batch_size": None, "grad_accum_steps": None, "seq_len": None, "epochs": None, "train_steps": None,
        "precision": None, "comm_heavy": None, "network_sensitivity": None,
    }
    par = label.pop("parallelism", {})
    lab["parallelism"].update(par)
    for k, v in label.items():
        if k not in lab:
            raise KeyError(f"{name}: unknown label field {k}")
        lab[k] = v
    ng = lab["num_gpus"]
    fam = lab["model_family"]
    if "comm_heavy" not in label and "network_sensitivity" not in label:
        if ng is not None and ng <= 1:
            lab["network_sensitivity"], lab["comm_heavy"] = 0.0, False
        elif ng is not None and fam in FAMILY_WORKLOAD:
            wl = FAMILY_WORKLOAD[fam]
            if fam == "resnet" and lab["model_name"] in {"resnet18", "resnet34"}:
                wl = "resnet18"
            s = round(sensitivity_from_slowdown(CATALOGUE[wl].spread_slowdown), 3)
            lab["network_sensitivity"], lab["comm_heavy"] = s, s >= 0.5
    JOBS.append({"name": name, "command": command, "files": {k: dedent(v) for k, v in files.items()},
                 "env": env or {}, "notes": notes, "label": lab})
