"""Which devices a job's own code asks for: GPU use, local launchers (spawn, Process loops), visible devices, TensorFlow strategies."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import Setting, to_int
from schedmate.codeprof.params import CODE_DEFAULT, COMMAND_LINE
from schedmate.codeprof.pyast import analyze_python
from schedmate.codeprof.static.documented_gpus import documented_single_gpu
from schedmate.codeprof.static.gpu_workers import enclosing_headers, per_gpu_launches
from schedmate.codeprof.static.spread_gpus import SpreadGpusMixin
from schedmate.codeprof.static.tf_towers import towers_over_local_gpus
from schedmate.codeprof.static.torch_with_tf import trains_with_torch
from schedmate.codeprof.static.visible_split import batch_split_over_visible_gpus


class DevicesMixin(SpreadGpusMixin):
    """The job's device footprint as its Python code sets it (read by the topology pass in runtime.py)."""

    def _imports_any(self, *mods: str) -> list[str]:
        hits = []
        for rel, s in self.r.py.items():
            for imp in s["imports"]:
                if imp.split(".")[0] in mods or imp in mods:
                    hits.append(rel)
                    break
        return hits

    def _uses_gpu(self) -> tuple[bool | None, list[str]]:
        L = self.r.launch
        assert L is not None
        if L.get("cpu_only"):
            return False, L.settings["cpu_only"].where
        acc = self.lightning.get("accelerator")
        if acc and str(acc[0]).lower() == "cpu":
            return False, acc[1]
        no_cuda = self.r.params.get("no_cuda", "use_cpu")
        if no_cuda is not None and no_cuda.value is True and no_cuda.layer >= CODE_DEFAULT:
            return False, no_cuda.where
        cuda_hits: list[str] = []
        for rel, c in self.calls:
            blob = " ".join([c["func"], *c["args"], *c["kwargs"].values()])
            if re.search(r"cuda|nccl|\bgpu", blob, re.IGNORECASE) and self._active(c) is not False:
                cuda_hits.append(f"{rel}:{c['line']}")
        for rel, s in self.r.py.items():
            for a in s["assigns"]:
                if re.search(r"cuda|nccl", a["expr"]):
                    cuda_hits.append(f"{rel}:{a['line']}")
        cvd = L.env.get("CUDA_VISIBLE_DEVICES")
        if cvd is not None and cvd.strip() not in {"", "-1"}:
            return True, ["env:CUDA_VISIBLE_DEVICES"]
        if L.get("gpu_framework") and cvd is None:  # a GPU training framework's own entry point
            return True, L.settings["gpu_framework"].where
        gpu_lib = next((lib for lib in self._libraries if lib.gpu), None)
        if gpu_lib is not None and cvd is None:
            return True, [f"{gpu_lib.name} (library conventions)"]
        if cvd is not None and not cuda_hits:  # `CUDA_VISIBLE_DEVICES= python ...`: no GPU visible on purpose
            return False, ["env:CUDA_VISIBLE_DEVICES"]
        dev = self.r.params.get("device")
        if dev is not None and isinstance(dev.value, str):
            if dev.value.startswith("cuda"):
                return True, dev.where
            if dev.value == "cpu" and dev.layer >= COMMAND_LINE:
                return False, dev.where
        if cuda_hits:
            return True, cuda_hits[:3]
        if self._imports_any(
            "transformers",
            "lightning",
            "pytorch_lightning",
            "accelerate",
            "deepspeed",
            "megatron",
            "horovod",
            "torchtitan",
            "jax",
            "flax",
            "tensorflow",
            "keras",
        ):
            return None, []
        # no CUDA in the files read: CPU only when the code says so (a cpu device, a CPU-only launch); a
        # job on a GPU cluster often reaches the GPU inside a package the analyzer did not read
        cpu_hits = [f"{rel}:{c['line']}" for rel, c in self.calls
                    if re.search(r"""device\(\s*['"]cpu['"]|^torch\.set_num_threads$""", " ".join([c["func"], *c["args"]]))
                    and self._active(c) is not False]
        for rel, s in self.r.py.items():
            cpu_hits += [f"{rel}:{a['line']}" for a in s["assigns"]
                         if re.fullmatch(r"""\s*['"]cpu['"]\s*""", a["expr"]) and "device" in a["target"]]
        if self.r.py and cpu_hits and not L.get("distributed_launcher"):
            return False, cpu_hits[:3]
        return None, []

    def _local_launcher(self) -> tuple[Setting, Setting | None] | None:
        """A function of the job that starts the processes (`mp.start_processes(..., nprocs=<its parameter>)`),
        called with the GPU count: the argument bound to that parameter at the call is the processes per
        node, and a `num_machines`/`num_nodes` parameter the nodes."""
        if (ray := self._ray_scaling()) is not None:
            return ray, None
        if (pool := self._ray_pool_gpus()) is not None:  # spread_gpus.py: verl-style `trainer.n_gpus_per_node`
            return pool
        defs = {f["name"]: (rel, f) for rel, s in self.r.py.items() for f in s["functions"] if f.get("params")}
        for rel, c in self.calls:
            tail = c["func"].rsplit(".", 1)[-1]
            if tail not in defs or self._active(c) is False:
                continue
            frel, fdef = defs[tail]
            params = fdef["params"]
            for frel2, inner in self.calls:
                if frel2 != frel or not fdef["line"] <= inner["line"] <= fdef["end"]:
                    continue
                tail = inner["func"].rsplit(".", 1)[-1]
                if tail == "Process" and (n := self._process_loop(frel, fdef, c, params, inner)) is not None:
                    return n, None  # `for i in range(num_proc): mp.Process(...).start()`
                if tail not in {"spawn", "start_processes"}:
                    continue
                src = inner["kwargs"].get("nprocs") or (inner["args"][2] if len(inner["args"]) > 2 else None)
                where = [f"{rel}:{c['line']}", f"{frel}:{inner['line']}"]
                if src is not None and src not in params:
                    # `nprocs=cfg.NUM_GPUS` with `cfg` the config the job passes: the config's value
                    ok, v, ev = self._resolver.eval(src)
                    if ok and isinstance(v, int) and v > 0:
                        return Setting(v, [*where, *ev]), None
                    continue
                if src is None:
                    continue
                per_node = self._bound_count(c, params, src, where)
                if per_node is None:
                    continue
                node_param = next((p for p in params if p in {"num_machines", "num_nodes", "nnodes"}), None)
                return per_node, (self._bound_count(c, params, node_param, where) if node_param else None)
        return None

    def _gpu_worker_launcher(self) -> str | None:
        """file:line where a function the entry calls starts one worker per GPU (`gpu_workers.py`) over a count
        decided at run time, in a file read or in one of the entry's local imports left past the file budget
        (scanned, not read)."""
        files = [(rel, s) for rel, s in self.r.py.items()] + [(rel, None) for rel in self.over_budget]
        called = {c["func"].rsplit(".", 1)[-1] for rel, c in self.calls
                  if rel == self.r.entry and self._active(c) is not False}
        for rel, s in files:
            text = self.wd.read_text(rel) or ""
            if not re.search(r"\b(fork|Process|spawn|start_processes)\(", text):
                continue
            try:
                s = s if s is not None else analyze_python(text)
            except (SyntaxError, ValueError, RecursionError):
                continue
            for name, line, counts in per_gpu_launches(s, text):
                if name in called and not any(isinstance(self._resolver.eval(x)[1], int) for x in counts):
                    return f"{rel}:{line}"  # a count the sources set (`--n_gpu 1`) decides elsewhere
        return None

    def _ray_scaling(self) -> Setting | None:
        """Ray Train's `ScalingConfig(num_workers=N, use_gpu=True)`: N worker processes of one GPU each. Workers of
        several GPUs (`resources_per_worker={"GPU": 2}`: a process is no longer a GPU), fractional GPUs or a
        CPU-only scaling decide nothing here (the first two leave the count open)."""
        for rel, c in self._find_calls("ScalingConfig"):
            kw = c["kwargs"]
            if "num_workers" not in kw or self._active(c) is False:
                continue
            ok_g, gpu, _ = self._resolver.eval(kw.get("use_gpu", "False"))
            ok, n, ev = self._resolver.eval(kw["num_workers"])
            if not (ok_g and gpu is True and ok and isinstance(n, int) and not isinstance(n, bool) and n > 0):
                continue
            per: Any = 1
            if "resources_per_worker" in kw:
                ok_r, res, ev_r = self._resolver.eval(kw["resources_per_worker"])
                per = res.get("GPU", 1) if ok_r and isinstance(res, dict) else None
                ev = [*ev, *ev_r]
            if isinstance(per, (int, float)) and not isinstance(per, bool) and per == 1:
                return Setting(n, [f"{rel}:{c['line']}", *ev])
            return Setting(None, [f"{rel}:{c['line']}"])  # GPUs per process other than one: left open
        return None

    def _process_loop(self, rel: str, fdef: dict[str, Any], call: dict[str, Any], params: list[str],
                      proc: dict[str, Any]) -> Setting | None:
        """Processes a function starts in the `for ... in range(<its parameter>)` loop (or a config value) that
        encloses its `Process(...)` call, when the process target uses the GPU (`spread_gpus.target_on_gpu`):
        CPU actor processes beside one learner are no GPU count."""
        text = self.wd.read_text(rel) or ""
        if not self._target_on_gpu(proc):
            return None
        for _, header in enclosing_headers(text.splitlines(), proc["line"], fdef["line"])[:3]:
            m = re.match(r"\s*for\s+\w+\s+in\s+range\(\s*([\w.]+)\s*\)", header)
            if not m:
                continue
            where = [f"{self.r.entry}:{call['line']}", f"{rel}:{fdef['line']}"]
            if m.group(1) in params:
                return self._bound_count(call, params, m.group(1), where)
            ok, v, ev = self._resolver.eval(m.group(1))
            return Setting(v, [*where, *ev]) if ok and isinstance(v, int) and v > 0 else None
        return None

    def _enclosing_range(self, rel: str, line: int) -> Setting | None:
        """The count of the `for ... in range(<count>)` loop a line of the file sits in, when known."""
        lines = (self.wd.read_text(rel) or "").splitlines()
        for k, text in enclosing_headers(lines, line, line - 38)[:1]:  # within 40 lines
            m = re.match(r"\s*for\s+\w+\s+in\s+range\(\s*([\w.()]+)\s*\):", text)
            if not m:
                return None  # the nearest enclosing block is not a counted loop
            ok, v, ev = self._resolver.eval(m.group(1))
            return Setting(v, [f"{rel}:{k + 1}", *ev]) if ok and isinstance(v, int) and v > 0 else None
        return None

    def _bound_count(self, call: dict[str, Any], params: list[str], name: str, where: list[str]) -> Setting | None:
        """The positive integer `call` passes for parameter `name` of the function it calls."""
        k = params.index(name)
        arg = call["kwargs"].get(name) or (call["args"][k] if k < len(call["args"]) else None)
        if arg is None:
            return None
        ok, v, ev = self._resolver.eval(arg)
        return Setting(v, [*where, *ev]) if ok and isinstance(v, int) and v > 0 else None

    def _python_relaunch(self) -> str | None:
        """file:line where the job starts Python copies of the training (`subprocess.Popen(
        [sys.executable] + args)`) over `torch.cuda.device_count()` GPUs: a launcher written in Python. In the
        entry script, or in a function of a module it imports that the entry calls under guards that hold
        (`if cfg.ddp and cfg.rank is None: start_ddp_workers(cfg)`; `ddp: false` never relaunches)."""
        entry = self.r.entry or ""
        for rel, s in self.r.py.items():
            counted = [a["line"] for a in s.get("assigns", []) if "device_count()" in a["expr"]]
            if not counted:
                continue
            for c in s.get("calls", []):
                if c["func"].rsplit(".", 1)[-1] not in {"Popen", "call", "check_call", "run"} \
                        or "sys.executable" not in " ".join(c["args"]):
                    continue
                if rel == entry and c["func"].startswith("subprocess"):
                    return f"{rel}:{c['line']}"
                fn = next((f for f in s.get("functions", []) if f["line"] <= c["line"] <= (f["end"] or 0)
                           and any(f["line"] <= k <= c["line"] for k in counted)), None)
                if rel == entry or fn is None:
                    continue
                for erel, ec in self.calls:  # the entry calls that function, and its guards do not rule it out
                    if erel == entry and ec["func"].rsplit(".", 1)[-1] == fn["name"] \
                            and self._resolver.truth(ec.get("when", [])) is not False:
                        return f"{rel}:{c['line']}"
        return None

    def _visible_devices(self) -> Setting | None:
        """The GPUs `CUDA_VISIBLE_DEVICES` makes visible to a one-process job, when the job sets it (its own code
        setting `os.environ["CUDA_VISIBLE_DEVICES"]` before CUDA starts wins over the submitter's value)."""
        if (code := self._code_visible_devices()) is not None:
            return code
        cvd = (self.r.launch.env.get("CUDA_VISIBLE_DEVICES") if self.r.launch else None) or ""
        ids = [d for d in cvd.split(",") if d.strip()]
        return Setting(len(ids), ["env:CUDA_VISIBLE_DEVICES"]) if ids and all(d.strip().isdigit() for d in ids) \
            else None

    def _code_visible_devices(self) -> Setting | None:
        """`os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id` in the job's code, under guards that hold, with a
        value the sources give (an id list such as `'0,1'`)."""
        resolver = getattr(self, "_resolver", None)
        if resolver is None:
            return None
        for rel, s in self.r.py.items():
            for k in s.get("key_sets", []):
                if k["key"] != "CUDA_VISIBLE_DEVICES" or not k["obj"].endswith("environ") \
                        or resolver.truth(k.get("when", [])) is False:
                    continue
                ok, v, ev = resolver.eval(k["expr"])
                if ok and (n := self._gpu_ids(v)):
                    return Setting(n, [f"{rel}:{k['line']}", *ev])
        return None

    def _spawn_count(self, got: Setting) -> Setting | None:
        """The processes `mp.spawn(nprocs=...)` starts, from the count the sources resolve. A count that is the
        launch's own world size (`cfg.rank, cfg.world_size = get_dist_info(cfg)` read in a job started as one
        process) is circular: such a helper counts the GPUs itself when no launcher set up the processes, so the
        program starts one process per visible GPU (what the submitter makes visible, else open)."""
        L = self.r.launch
        if "cmd:world_size" in got.where and L is not None and L.get("single_process"):
            return self._visible_devices()
        return got

    def _spawned(self, sp: Any, rel: str, c: dict[str, Any]) -> tuple[Setting, Setting | None] | None:
        """(processes per node, nodes) of a library call that starts the processes itself."""
        def arg(index: int | None, kw: str | None) -> tuple[Any, list[str]] | None:
            src = c["kwargs"].get(kw) if kw else None
            if src is None and index is not None and index < len(c["args"]):
                src = c["args"][index]
            if src is None:
                return None
            ok, v, ev = self._resolver.eval(src)
            return (v, [f"{rel}:{c['line']}", *ev]) if ok and isinstance(v, int) and v > 0 else None

        per_node = arg(sp.per_node_arg, sp.per_node_kw)
        if per_node is None:
            return None
        nodes = arg(sp.nodes_arg, sp.nodes_kw)
        return Setting(*per_node), (Setting(*nodes) if nodes else None)

    _TF_STRATEGIES = ("MirroredStrategy", "MultiWorkerMirroredStrategy", "CentralStorageStrategy",
                      "TPUStrategy", "ParameterServerStrategy")

    def _tensorflow_devices(self) -> tuple[bool, Setting | None]:
        """(decided, GPUs) of a one-process TensorFlow/Keras job: a mirrored strategy uses every visible GPU
        (what the job makes visible, else open: decided, None); the job's own `num_gpus` setting says how many
        it replicates over; with neither, TensorFlow computes on one GPU. Not decided for code that does not
        train."""
        if self._one_process_many_gpus and (self._find_calls(*self._data_parallel_tails())
                                            or self._one_process_many_gpus == getattr(self, "_deep_dp", None)):
            return False, None  # a torch DataParallel job that imports TensorFlow for its data pipeline
        if trains_with_torch(self.calls, self.r.py) is not None:
            return False, None  # a torch training loop that imports TensorFlow for file I/O or its data
        strategies = [f"{rel}:{c['line']}" for t in self._TF_STRATEGIES for rel, c in self._find_calls(t)]
        # a strategy built in a helper the job calls still shows where the job uses it
        strategies += [f"{rel}:{c['line']}" for rel, c in self._find_calls(
            "experimental_distribute_dataset", "distribute_datasets_from_function", "experimental_run_v2")]
        # (a strategy the job builds only under a guard its settings leave false is not used: `if FLAGS.multi_gpu:`)
        strategies += [f"{rel}:{c['line']}" for rel, c in self.calls if self._active(c) is not False
                       and ((c["func"].endswith((".scope", ".run")) and "strateg" in c["func"].lower())
                            or re.search(r"(get|build|create|make)_?(distribution_|distribute_)?strategy$",
                                         c["func"].rsplit(".", 1)[-1], re.IGNORECASE))]
        if strategies:
            # TF 1.x `MirroredStrategy(num_gpus=n)` / `MirroredStrategy(devices=[...])`: the GPUs it mirrors over
            for rel, c in self._find_calls("MirroredStrategy"):
                src = c["kwargs"].get("num_gpus") or c["kwargs"].get("devices")
                ok, v, ev = self._resolver.eval(src) if src else (False, None, [])
                n = len(v) if ok and isinstance(v, list) else (v if ok and isinstance(v, int) else None)
                if n and n > 0 and not isinstance(n, bool):
                    return True, Setting(n, [f"{rel}:{c['line']}", *ev])
            return True, self._visible_devices()
        for name in ("num_gpus", "n_gpus", "num_gpu", "gpus"):
            pv = self.r.params.get(name)
            if pv is not None and pv.layer >= CODE_DEFAULT and to_int(pv.value) and to_int(pv.value) > 0:
                return True, Setting(to_int(pv.value), pv.where)
        if (towers := towers_over_local_gpus(self.r.py, self.wd.read_text)) is not None:
            return True, self._every_visible_gpu(towers, "the job builds one tower per GPU it lists")
        if self._find_calls("fit", "train", "train_and_evaluate", "GradientTape", "Estimator", "run_experiment") \
                or self.r.params.get("train_steps", "num_train_steps", "epochs", "train_epochs") is not None:
            entry = self.r.entry or "cmd"
            return True, Setting(1, [f"{entry}:1"])
        return False, None

    def _mirrored(self) -> bool:
        return bool(
            self._find_calls(
                "MirroredStrategy",
                "pmap",
                "local_device_count",
                "devices",
                "Mesh",
                "mesh_utils",
                "create_device_mesh",
            )
        ) or not self._find_calls("DistributedDataParallel", "DDP")

    # a one-process program's own option for its GPUs: a count (`--num-gpus=8`) or a list of device ids
    # (`--gpus 0,1,2,3`, `--gpu_ids 0-7`, `--device 0 1`) that it hands to DataParallel or its towers
    _GPU_COUNT_OPTIONS = ("num_gpus", "n_gpus", "ngpus", "num_gpu", "gpu_num", "nb_gpus", "n_gpu")
    _GPU_ID_OPTIONS = ("gpus", "gpu_ids", "gpu_id", "gpu_list", "gpu_devices", "device", "devices", "gpu")
    _ONE_ID_OPTIONS = ("gpu_ids", "gpu_id", "gpu_list", "gpu_devices", "device", "gpu")
    """options whose value is a device id even when alone (`--device 0`, YOLO's `cuda device, i.e. 0 or 0,1,2,3`);
    a lone `--gpus 2` / `--devices 2` is a count in Lightning-style programs, so it is not read here"""

    def _gpu_ids(self, value: Any) -> int | None:
        """How many device ids an id list names: `0,1,2,3`, `0-7`, `[0, 1]`, `0 1 2` (nargs), `cuda:0,1`."""
        if isinstance(value, int) and not isinstance(value, bool):
            items = [str(value)]  # `--device 0` read as a number
        elif isinstance(value, (list, tuple)):
            items = [str(v).strip() for v in value]
        elif isinstance(value, str):
            items = [x for x in re.split(r"[\s,]+", value.strip().strip("[]()").removeprefix("cuda:")) if x]
        else:
            return None
        n = 0
        for x in items:
            if x.isdigit():
                n += 1
            elif (m := re.fullmatch(r"(\d+)-(\d+)", x)) and int(m.group(1)) <= int(m.group(2)):
                n += int(m.group(2)) - int(m.group(1)) + 1
            else:
                return None
        return n or None

    def _gpu_option(self) -> Setting | None:
        """GPUs a one-process program says it uses through its own options, set on the command line: a count
        option (`--num-gpus=8`, TF tower and DataParallel programs) or an id list (`--gpus 0-7`,
        `--device 0,1,2,3`, `--device 0`; a lone value of `--gpus`/`--devices` may be a count, so it is left to
        the other readers)."""
        for name in self._GPU_COUNT_OPTIONS:
            pv = self.r.params.get(name)
            if pv is not None and pv.layer >= COMMAND_LINE and (n := to_int(pv.value)) and n > 0 \
                    and not isinstance(pv.value, bool):
                return Setting(n, pv.where)
        for name in self._GPU_ID_OPTIONS:
            pv = self.r.params.get(name)
            if pv is not None and pv.layer >= COMMAND_LINE and (n := self._gpu_ids(pv.value)) \
                    and (n >= 2 or name in self._ONE_ID_OPTIONS):
                return Setting(n, pv.where)
        return None

    def _from_device_count(self, rel: str, src: str) -> bool:
        """True when an expression is `torch.cuda.device_count()` or a name the same file assigns from it."""
        if "device_count" in src:
            return True
        names = set(re.findall(r"[A-Za-z_][\w.]*", src))
        s = self.r.py.get(rel, {})
        return any(a["target"] in names and "device_count" in a["expr"] for a in s.get("assigns", []))

    def _lightning_device_count(self) -> str | None:
        """file:line of a Lightning `Trainer(devices=<device_count()>)` (or `gpus=`): every visible GPU."""
        if not self._imports_any("lightning", "pytorch_lightning"):
            return None
        for rel, c in self._find_calls("Trainer"):
            src = c["kwargs"].get("devices") or c["kwargs"].get("gpus")
            if src is not None and self._from_device_count(rel, src):
                return f"{rel}:{c['line']}"
        return None

    def _every_visible_ids(self, rel: str, src: str) -> bool:
        """True when a `device_ids=` expression stands for every visible GPU: it evaluates to None (an option
        left at its `None` default), or it is built from `torch.cuda.device_count()` directly or through a
        name the same file assigns from it (`ngpus = torch.cuda.device_count(); range(ngpus)`)."""
        ok, v, _ = self._resolver.eval(src)
        return (ok and v is None) or self._from_device_count(rel, src)

    def _one_process_gpus(self, ppn: Setting | None, nprocs: Setting | None
                          ) -> tuple[Setting | None, Setting | None, bool]:
        """(processes per node, processes, decided) after the one-process job's own GPU choices: a DataParallel
        over every visible GPU (`device_ids` None or from `device_count()`, under guards that hold) makes the
        count what the job makes visible, else open, and its loader batch the global one; a GPU option of the
        program gives the count."""
        for rel, c in self._find_calls(*self._data_parallel_tails()):
            src = c["kwargs"].get("device_ids") or (c["args"][1] if len(c["args"]) > 1 else None)
            if c["func"].endswith("DistributedDataParallel") or src is None or not self._every_visible_ids(rel, src):
                continue
            self._one_process_many_gpus = f"{rel}:{c['line']}"
            got = self._gpu_option() or self._visible_devices()
            if got is None:
                self.r.notes.append(f"num_gpus: {rel}:{c['line']} uses DataParallel over every visible GPU; "
                                    "the count is set at submission")
                return Setting(None, [f"{rel}:{c['line']}"]), None, True
            return got, None, True
        if (got := self._gpu_option() or self._option_device_ids()) is not None:  # spread_gpus.py: `device_ids=gpus`
            return got, None, True
        if (pl := self._lightning_device_count()) is not None:  # each process one GPU: no batch split
            return self._every_visible_gpu(pl, "the Lightning Trainer takes torch.cuda.device_count() devices"), \
                None, True
        if (hf := self._hf_trainer_data_parallel(ppn)) is not None:
            self._one_process_many_gpus = hf
            return self._every_visible_gpu(
                hf, "the HF Trainer in one plain process runs DataParallel over every visible GPU"), None, True
        if (split := batch_split_over_visible_gpus(self.r.py, self.wd.read_text)) is not None:
            self._one_process_many_gpus = split
            return self._every_visible_gpu(
                split, "one process splits each batch over every visible GPU (torch.cuda.device_count())"), None, True
        return self._spread_past_reading(ppn, nprocs)

    def _every_visible_gpu(self, where: str, why: str) -> Setting:
        """The GPUs the job makes visible (`CUDA_VISIBLE_DEVICES` it sets) or its launch script documents (one
        GPU: static/documented_gpus.py), else open with a note: the job uses every visible GPU, so the count is
        decided at submission."""
        got = self._visible_devices() or documented_single_gpu(self.r.launch, self.wd.read_text)
        if got is None:
            self.r.notes.append(f"num_gpus: {where}: {why}; the count is set at submission")
        return got or Setting(None, [where])

    _QUANTIZED_OR_PLACED = ("device_map", "load_in_4bit", "load_in_8bit", "quantization_config", "max_memory")

    def _hf_trainer_data_parallel(self, ppn: Setting | None) -> str | None:
        """file:line of the HF `TrainingArguments` of a job the launch runs as one plain process, where the
        Trainer (documented) wraps the model in DataParallel over every visible GPU (`n_gpu =
        torch.cuda.device_count()`), or the model spreads over them itself (`device_map="auto"`). Not for a
        model the job places on chosen devices or quantizes (`device_map={"": 0}`, `load_in_4bit`: the count is
        not the Trainer's), nor under Lightning/Accelerate/DeepSpeed, nor when something else already set the
        processes."""
        L = self.r.launch
        if L is None or not L.get("single_process"):
            return None
        launcher_default = L.settings.get("procs_per_node")
        if ppn is not None and (ppn is not launcher_default or ppn.value != 1):
            return None
        if self._imports_any("lightning", "pytorch_lightning", "accelerate", "deepspeed"):
            return None
        if self._imports_any("jax", "flax") and not self._imports_any("torch"):
            return None  # a Flax script parsing HF TrainingArguments: JAX shards its batch (jax_batch.py), no Trainer
        args = [(rel, c) for rel, c in self.calls if c["func"].rsplit(".", 1)[-1].endswith("TrainingArguments")
                or (c["func"].rsplit(".", 1)[-1] == "HfArgumentParser" and "TrainingArguments" in " ".join(c["args"]))]
        if not args:
            return None
        for _, c in self.calls:
            placed = [k for k in self._QUANTIZED_OR_PLACED if k in c["kwargs"]]
            if placed and not (placed == ["device_map"] and re.fullmatch(
                    r"""\s*['"](auto|balanced|sequential)['"]\s*""", c["kwargs"]["device_map"])):
                return None  # `device_map="auto"` alone still spreads the model over every visible GPU
        rel, c = args[0]
        return f"{rel}:{c['line']}"
