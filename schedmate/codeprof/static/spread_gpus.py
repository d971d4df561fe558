"""GPU counts a one-process job decides past the files the reader takes in, or in settings its trainer reads.

- Code the job runs that spreads over every visible GPU, in a module the entry's imports import in turn (the
  reader takes in one level of local imports): `nn.DataParallel(model)` without a device list. Such a job's GPU
  count is what the submission makes visible (open unless the job sets it).
- A model loaded with `device_map="auto"` (or "balanced"/"sequential") in one plain process: the model is spread
  over every visible GPU (a `max_memory` built over `torch.cuda.device_count()` spreads it too; one naming chosen
  devices, or a quantized load, leaves the count to the other readers).
- A Ray single-controller trainer (verl style) whose config gives `trainer.n_gpus_per_node` and
  `trainer.nnodes`: the resource pool it builds is that many GPUs per node on that many nodes.
- Lightning's `devices` and `gpus` both given: the one set on the command line wins over the config's.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.launch import Setting, to_int
from schedmate.codeprof.params import CODE_DEFAULT
from schedmate.codeprof.pyast import analyze_python

MAX_SCANNED = 60
"""local modules scanned (not read) past the reader's files, breadth first from its files' imports"""

# one argument and nothing else: `nn.DataParallel(model)`, `torch.nn.DataParallel(self.net)`
_DP_ALL = re.compile(r"^(?!\s*(?:#|>>>|\.\.\.)).*?\b(?:nn\.|torch\.nn\.|parallel\.)?DataParallel\(\s*[\w.\[\]]+\s*\)",
                     re.MULTILINE)
_DP_CHOSEN = re.compile(r"DataParallel\w*\([^)]*device_ids\s*=")
_MANY_PROCESSES = re.compile(r"\b(DistributedDataParallel|init_process_group|mp\.spawn|start_processes|"
                             r"deepspeed\.initialize|Accelerator\()")
_SPREAD_MAP = re.compile(r"""^\s*['"](auto|balanced|sequential)['"]\s*$""")
_DEVICE_COUNT = re.compile(r"^(?!\s*#)\s*\w+\s*=\s*[\w.]*(?:get_device_count|device_count)\(", re.MULTILINE)
_DIST_LAUNCHER = re.compile(r"^(?!\s*#).*\b(?:dist|distributed)\.launcher\b", re.MULTILINE)
_ID_LIST_OPTIONS = ("gpus", "gpu_ids", "gpu_list", "gpu_devices", "devices")
_ON_GPU = re.compile(r"cuda|device|gpu|nccl|distributed|rank", re.IGNORECASE)
_QUANTIZED = ("load_in_4bit", "load_in_8bit", "quantization_config")


class SpreadGpusMixin:
    """Read by `DevicesMixin._one_process_gpus` and the topology pass (runtime.py)."""

    r: Any
    wd: Any
    calls: Any
    _resolver: Any
    _active: Any
    _imports_any: Any
    _import_file: Any

    _every_visible_gpu: Any
    _find_calls: Any
    _data_parallel_tails: Any
    _gpu_ids: Any
    _one_process_many_gpus: str | None

    def _spread_past_reading(self, ppn: Setting | None, nprocs: Setting | None
                             ) -> tuple[Setting | None, Setting | None, bool]:
        """(processes per node, processes, decided) for a one-process job that nothing read so far decided: a
        DataParallel over every visible GPU in a module past the files read (its loader batch is then the global
        one), or a model spread over every visible GPU by `device_map="auto"` (one replica: no batch split)."""
        L = self.r.launch
        if L is None or (ppn is not None and (ppn is not L.settings.get("procs_per_node") or ppn.value != 1)):
            return ppn, nprocs, False
        if (dp := self._deep_data_parallel()) is not None:
            self._deep_dp = self._one_process_many_gpus = dp
            return self._every_visible_gpu(dp, "a module the job imports wraps the model in DataParallel over "
                                               "every visible GPU"), None, True
        if (ml := self._device_count_launcher()) is not None:
            return self._every_visible_gpu(ml, "the job starts one worker per visible GPU through its framework's "
                                               "launcher (`dist.launcher`) when it sees more than one"), None, True
        if (dm := self._auto_device_map()) is not None:
            # one replica whatever the GPU count: its loader batch is the step's whole batch (derive: dp = 1)
            self.r.put("parallelism.data", "none", [dm], note='one model spread by device_map="auto": one replica')
            return self._every_visible_gpu(dm, 'the model is loaded with device_map="auto" over every visible '
                                               "GPU"), None, True
        return ppn, nprocs, False

    def _option_device_ids(self) -> Setting | None:
        """`DataParallel(model, device_ids=gpus)` where `gpus` is the program's id-list option (`--gpus`, default
        or given `0-3` / `0,1,2,3`, parsed by a helper the resolver does not follow): the ids it lists."""
        for rel, c in self._find_calls(*self._data_parallel_tails()):
            src = c["kwargs"].get("device_ids")
            if c["func"].endswith("DistributedDataParallel") or src is None or not re.fullmatch(r"[\w.]+", src):
                continue
            name = src.rsplit(".", 1)[-1]
            if name not in _ID_LIST_OPTIONS or (pv := self.r.params.get(name)) is None or pv.layer < CODE_DEFAULT:
                continue
            v = pv.value
            if isinstance(v, str) and not re.search(r"[,\-\s]", v.strip()):
                continue  # a lone `2` may be a count
            if (n := self._gpu_ids(v)) is not None:
                return Setting(n, [f"{rel}:{c['line']}", *pv.where])
        return None

    def _target_on_gpu(self, proc: dict[str, Any]) -> bool:
        """False when a `Process(target=f)` runs a function of the files read whose body never names a GPU device
        (`cuda`, `device`, `gpu`, `nccl`) nor anything distributed (`rank`, `DistributedSampler`): a CPU worker (an
        RL actor, a data feeder), not one process per GPU.
        True otherwise (also for a target the files read do not define)."""
        src = proc["kwargs"].get("target") or (proc["args"][1] if len(proc["args"]) > 1 else None)
        if src is None:
            return True
        name = src.rsplit(".", 1)[-1]
        for rel, s in self.r.py.items():
            for f in s.get("functions", []):
                if f["name"] == name and f.get("end"):
                    body = "\n".join((self.wd.read_text(rel) or "").splitlines()[f["line"] - 1:f["end"]])
                    return bool(_ON_GPU.search(body))
        return True

    def _scanned_modules(self) -> list[tuple[str, str]]:
        """(file, text) of the local modules the read files import, and what those import, that the reader did
        not read itself (at most MAX_SCANNED, breadth first)."""
        seen = set(self.r.py)
        queue = [(rel, s.get("imports", [])) for rel, s in self.r.py.items()]
        out: list[tuple[str, str]] = []
        while queue and len(out) < MAX_SCANNED:
            rel, imports = queue.pop(0)
            base = str(PurePosixPath(rel).parent)
            for imp in imports:
                cand = self._import_file(imp, base)
                if cand is None or cand in seen:
                    continue
                seen.add(cand)
                text = self.wd.read_text(cand)
                if text is None:
                    continue
                out.append((cand, text))
                try:
                    queue.append((cand, analyze_python(text).get("imports", [])))
                except (SyntaxError, ValueError, RecursionError):
                    continue
        return out

    def _deep_data_parallel(self) -> str | None:
        """file:line of `nn.DataParallel(model)` (no device list) in a module past the files read, when nothing
        the job reads or scans starts processes of its own (DDP, spawn, Accelerate, DeepSpeed)."""
        L = self.r.launch
        if L is None or not L.get("single_process") or self._find_calls(*self._data_parallel_tails()):
            return None  # a DataParallel the files read build themselves (with its device list) decides
        for rel in self.r.py:
            if _MANY_PROCESSES.search(self.wd.read_text(rel) or ""):
                return None
        found = None
        for rel, text in self._scanned_modules():
            if _MANY_PROCESSES.search(text) or _DP_CHOSEN.search(text):
                return None  # processes of their own, or a DataParallel over the devices the job chooses
            m = _DP_ALL.search(text)
            if m is not None and found is None:
                found = f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
        return found

    def _device_count_launcher(self) -> str | None:
        """file:line of a distributed framework's own process launcher (`megengine.distributed.launcher(worker)`,
        which starts one worker per visible GPU unless given `n_gpus`) in the entry, beside a count of the visible
        GPUs (`get_device_count("gpu")`, `device_count()`)."""
        entry = self.r.entry or ""
        text = self.wd.read_text(entry) or ""
        if not _DEVICE_COUNT.search(text) or re.search(r"\bn_gpus\s*=", text):
            return None
        m = _DIST_LAUNCHER.search(text)
        return f"{entry}:{text.count(chr(10), 0, m.start()) + 1}" if m else None

    def _auto_device_map(self) -> str | None:
        """file:line of a model load with `device_map="auto"` under guards that hold, in a job the launch runs
        as one plain process with no Accelerate/DeepSpeed/Lightning: the model spreads over every visible GPU.
        None for a quantized load or a `max_memory` that names devices other than by `device_count()`."""
        L = self.r.launch
        if L is None or not L.get("single_process"):
            return None
        if self._imports_any("lightning", "pytorch_lightning", "accelerate", "deepspeed"):
            return None
        for rel, c in self.calls:
            src = c["kwargs"].get("device_map")
            if src is None or not _SPREAD_MAP.match(src) or self._active(c) is False:
                continue
            for k in _QUANTIZED:  # `load_in_8bit=args.load_int8` with the option off is not a quantized load
                ok, v, _ = self._resolver.eval(c["kwargs"][k]) if k in c["kwargs"] else (True, None, [])
                if not ok or (v is not None and v is not False):
                    return None
            mem = c["kwargs"].get("max_memory")
            if mem is not None and "device_count" not in mem:
                return None
            return f"{rel}:{c['line']}"
        return None

    def _ray_pool_gpus(self) -> tuple[Setting, Setting | None] | None:
        """(GPUs per node, nodes) of a Ray single-controller trainer: the job imports ray, its code reads
        `n_gpus_per_node`, and its config or command line gives `trainer.n_gpus_per_node` (and `trainer.nnodes`)."""
        if not self._imports_any("ray"):
            return None
        reads = next((f"{rel}:{a['line']}" for rel, s in self.r.py.items() for a in s.get("assigns", [])
                      if "n_gpus_per_node" in a["expr"]), None)
        reads = reads or next((f"{rel}:{c['line']}" for rel, c in self.calls
                               if "n_gpus_per_node" in " ".join([*c["args"], *c["kwargs"].values()])), None)
        if reads is None:
            return None
        P = self.r.params
        gpn = P.get_path("trainer.n_gpus_per_node")
        if gpn is None or gpn.layer < CODE_DEFAULT or not (n := to_int(gpn.value)) or n <= 0 \
                or isinstance(gpn.value, bool):
            return None
        nodes = P.get_path("trainer.nnodes")
        k = to_int(nodes.value) if nodes is not None and nodes.layer >= CODE_DEFAULT else None
        return Setting(n, [*gpn.where, reads]), (Setting(k, nodes.where) if k and k > 0 and nodes else None)


def lightning_count(lt: dict[str, tuple[Any, list[str]]]) -> tuple[Any, list[str]]:
    """Lightning's device count when `devices` or `gpus` is given: the command line's over a config's (`trainer.gpus=4`
    over a YAML `devices: 1`), else `devices`."""
    if "devices" in lt and "gpus" in lt:
        on_cmd = [k for k in ("devices", "gpus") if "cmd" in lt[k][1]]
        if len(on_cmd) == 1:
            return lt[on_cmd[0]]
    return lt.get("devices", lt.get("gpus"))  # type: ignore[return-value]
