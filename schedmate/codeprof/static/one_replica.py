"""One process, one replica: the data-parallel size of a job whose GPU count is open but whose batch is not.

A plain `python train.py` with no launcher starts one process. Unless its code replicates the model over
devices itself (DataParallel, a `tf.distribute` strategy, `pmap`, spawned workers, a trainer library that
does so for it), every optimizer step sees exactly the batch its loader yields, however many GPUs the
machine has: the data-parallel size is 1, so global = micro x accumulation even with the GPU count left to
submission. The reading is only made when every module the job imports is either its own (and read),
the standard library, or a base library known not to replicate on its own; any other third-party
import could hide a multi-device trainer, and a wrong batch is worse than none.
"""

from __future__ import annotations

import re
import sys
from typing import Any

# Third-party libraries that never spread one process's batch over several devices by themselves (the
# calls that would, such as `torch.nn.DataParallel` or a `tf.distribute` strategy, are checked apart).
BASE_LIBRARIES = frozenset({
    "torch", "torchvision", "torchaudio", "torchtext", "tensorflow", "keras", "tf_keras", "tensorflow_probability",
    "tensorflow_datasets", "tensorflow_addons", "tflearn", "numpy", "scipy", "pandas", "sklearn", "gym",
    "gymnasium", "matplotlib", "tqdm", "PIL", "cv2", "yaml", "ruamel", "absl", "h5py", "tensorboardX",
    "tensorboard", "wandb", "einops", "imageio", "skimage", "librosa", "soundfile", "networkx", "seaborn",
    "click", "fire", "ml_collections", "omegaconf", "easydict", "termcolor", "tabulate", "colorama", "requests",
    "pybullet_envs", "pybullet", "mujoco_py", "mujoco", "atari_py", "ale_py", "box2d", "Box2D", "dm_control",
    "datasets", "tokenizers", "sentencepiece", "nltk", "jieba", "regex", "psutil", "setuptools", "pkg_resources",
    "six", "future", "mlflow", "comet_ml", "visdom", "lmdb", "pyarrow", "numba", "cloudpickle", "dill",
    "joblib", "gin", "sacred", "attr", "attrs", "pydantic", "typing_extensions", "rich", "loguru", "coloredlogs",
    "natsort", "jsonlines", "ujson", "orjson", "toml", "tomli", "packaging", "filelock", "huggingface_hub",
    "safetensors", "pynvml", "GPUtil", "gdown", "wget", "zmq", "msgpack", "xxhash", "faiss", "statsmodels",
    "sympy", "shapely", "pycocotools", "albumentations", "kornia", "timm", "torchmetrics", "thop", "ptflops",
    "torchsummary", "prettytable", "ipdb", "IPython",
})
# Calls that put one process's work on several devices, or start further processes.
MULTI_DEVICE_CALLS = frozenset({
    "DataParallel", "DistributedDataParallel", "DDP", "FSDP", "FullyShardedDataParallel", "fully_shard",
    "spawn", "start_processes", "Process", "Pool", "init_process_group", "pmap", "pjit", "shard_map",
    "device_put_sharded", "device_put_replicated", "Mesh", "MirroredStrategy", "MultiWorkerMirroredStrategy",
    "TPUStrategy", "CentralStorageStrategy", "ParameterServerStrategy", "multi_gpu_model", "replicate_model_fn",
    "DistributedOptimizer", "get_strategy", "distribute_datasets_from_function", "experimental_distribute_dataset",
    "TPUEstimator", "CrossShardOptimizer", "TPUClusterResolver", "shard", "replicate",
})


def _module_paths(name: str, base_dirs: list[str]) -> list[str]:
    parts = name.split(".")
    out: list[str] = []
    for base in base_dirs:
        prefix = f"{base}/" if base else ""
        for k in range(len(parts), 0, -1):
            stem = prefix + "/".join(parts[:k])
            out += [f"{stem}.py", f"{stem}/__init__.py"]
    return out


_IMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))", re.MULTILINE)
_MULTI_CALL = re.compile(r"\b(" + "|".join(sorted(MULTI_DEVICE_CALLS)) + r")\s*\(|\btrain_distribute\b")
MAX_SCANNED = 40
"""local modules the static pass did not read are scanned as text, up to this many (else: not sure)"""


def foreign_imports(sp: Any) -> tuple[set[str], list[str]]:
    """(top-level third-party modules the job's local code imports, local modules that could not be checked).
    Files the static pass read give their imports; local modules it did not read are scanned as text for
    imports and multi-device calls (one found makes the module unchecked)."""
    wd, py = sp.wd, sp.r.py
    entry_dir = (sp.r.entry or "").rsplit("/", 1)[0] if "/" in (sp.r.entry or "") else ""
    foreign: set[str] = set()
    unread: list[str] = []
    seen = set(py)
    todo: list[tuple[str, list[str]]] = [(rel, list(s["imports"])) for rel, s in py.items()]
    while todo:
        rel, imports = todo.pop()
        here = rel.rsplit("/", 1)[0] if "/" in rel else ""
        bases = list(dict.fromkeys([here, entry_dir, "", "src"]))
        for imp in imports:
            if imp.startswith("."):
                continue  # the package's own modules
            top = imp.split(".")[0]
            if top in sys.stdlib_module_names or top == "__future__":
                continue
            paths = [p for p in _module_paths(imp, bases) if wd.exists(p)]
            if paths:
                path = paths[0]
                if path in seen:
                    continue
                seen.add(path)
                text = wd.read_text(path) if len(seen) - len(py) <= MAX_SCANNED else None
                if text is None or _MULTI_CALL.search(text):
                    unread.append(imp)
                else:
                    todo.append((path, [m.group(1) or m.group(2) for m in _IMPORT.finditer(text)]))
                continue
            if wd.is_dir(top) or wd.is_dir(f"src/{top}") or (here and wd.is_dir(f"{here}/{top}")):
                continue  # a local namespace package (a name imported from it is a class or function)
            foreign.add(top)
    return foreign, unread


def one_replica_reason(sp: Any) -> str | None:
    """Why the job is one process with one model replica, or None when that is not sure."""
    r, L = sp.r, sp.r.launch
    if L is None or not L.get("single_process") or L.get("distributed_launcher") or not r.py:
        return None
    if r.val("num_gpus") is not None or r.val("parallelism.data") is not None:
        return None  # the GPU count decides it (derive.py), or a data-parallel mode was read
    if sp._one_process_many_gpus or getattr(sp, "_relaunched", None) or sp.lightning or sp.over_budget:
        return None
    if any(n.startswith("num_gpus:") for n in r.notes):
        return None  # a path that uses every visible GPU was found
    for _, c in sp.calls:
        tail = c["func"].rsplit(".", 1)[-1]
        if tail == "Process" and not sp._target_on_gpu(c):
            continue  # a CPU worker (a sampler, an RL actor) whose body names no device: not a replica
        if tail in MULTI_DEVICE_CALLS or "train_distribute" in c["kwargs"]:
            return None
    foreign, unread = foreign_imports(sp)
    if foreign - BASE_LIBRARIES or unread:
        return None
    return "one process whose code replicates the model on no other device: one data-parallel replica"


def mark_one_replica(sp: Any) -> None:
    """`parallelism.data` = none (derive.py then takes the data-parallel size as 1) for such a job."""
    why = one_replica_reason(sp)
    if why is not None:
        sp.r.put("parallelism.data", "none", [f"{sp.r.entry}:1"], note=why)
