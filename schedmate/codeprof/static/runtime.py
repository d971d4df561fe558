"""Values fixed in code at run time (TrainingArguments, Trainer, Accelerator, model configs) and the job's topology."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import Setting
from schedmate.codeprof.params import (
    CODE_DEFAULT,
    CONFIG,
    RUNTIME,
)
from schedmate.codeprof.resolve import Resolver
from schedmate.codeprof.static.jax_devices import imports_other_framework, job_files, names_multi_device
from schedmate.codeprof.static.names import (
    COMPUTED_GLOBAL,
    COMPUTED_STEPS,
    EPOCHS,
    EXPERTS,
    FFN,
    HIDDEN,
    LAYERS,
    LIGHTNING_KW,
    STEPS,
    STEPS_PER_EPOCH,
    VOCAB,
)
from schedmate.codeprof.static.fori_epochs import fori_block_epochs
from schedmate.codeprof.static.loop_length import (UNBOUNDED, chunked_loop_steps, fixed_block_epochs, lines_in_loops,
                                                  range_start_offsets, unbounded_caps, written_counts)
from schedmate.codeprof.static.spread_gpus import lightning_count
from schedmate.codeprof.static.warmup import loop_from_offset, updates_after_warmup

_SETTINGS_HOLDERS = {"args", "opt", "opts", "cfg", "config", "hparams", "hp", "params", "FLAGS"}


class RuntimeMixin:
    """Values fixed in code at run time (TrainingArguments, Trainer, Accelerator, model configs) and the job's topology."""

    def _make_resolver(self) -> Resolver:
        L = self.r.launch
        assert L is not None
        env = dict(L.env)
        world = L.get("num_procs")
        local = L.get("procs_per_node")
        if L.get("distributed_launcher") and world is not None:
            env.setdefault("WORLD_SIZE", str(world))
            env.setdefault("RANK", "0")
            env.setdefault("LOCAL_RANK", "0")
            if local is not None:
                env.setdefault("LOCAL_WORLD_SIZE", str(local))
            if "srun" in L.chain:
                env.setdefault("SLURM_NTASKS", str(world))
                env.setdefault("SLURM_PROCID", "0")
        if L.get("single_process"):  # one process, unless the job relaunches itself per visible GPU
            world = None if getattr(self, "_relaunched", None) else world or 1
        assigns: dict[str, list[dict[str, Any]]] = {}
        entry = self.r.py.get(self.r.entry or "", {})
        for a in entry.get("assigns", []):
            assigns.setdefault(a["target"], []).append(a)
        # `torch.cuda.device_count()` is the launcher's processes per node only when a launcher started one
        # process per GPU; a plain `python` process sees whatever GPUs the job is given
        visible = [d for d in (L.env.get("CUDA_VISIBLE_DEVICES") or "").split(",") if d.strip().isdigit()]
        per_node = local if L.get("distributed_launcher") else (len(visible) or None)
        return Resolver(self.r.params, env, world, per_node, assigns, self.r.entry or "")

    _JAX_MULTI = {"pmap", "pjit", "shard_map", "xmap", "Mesh", "NamedSharding", "PositionalSharding",
                  "device_put_replicated", "device_put_sharded", "local_device_count", "device_count", "devices",
                  "local_devices", "create_device_mesh", "make_mesh", "replicate", "shard", "with_sharding_constraint"}
    _JAX_FRAMEWORKS = ("t5x", "paxml", "praxis", "levanter", "maxtext", "MaxText", "big_vision", "scenic", "trax",
                       "jaxline", "flaxformer", "EasyLM", "seqio", "alpa", "haliax", "jestimator")

    def _jax_one_device(self) -> bool:
        """A JAX job that trains with jit and names no multi-device API (pmap, sharding, meshes, device counts)
        in any file read, nor runs on a multi-device framework: it computes on the default device."""
        if self._imports_any(*self._JAX_FRAMEWORKS):
            return False
        if imports_other_framework({rel: s["imports"] for rel, s in self.r.py.items()}):
            return False  # jax_devices.py: a job that may train with torch as well
        if job_files(self.over_budget):
            return False  # the job's own imports went past the file budget: a pmap may sit in one not read
        own = job_files(self.r.py)  # not the sources of JAX itself when the job sits in its repository
        if any(c["func"].rsplit(".", 1)[-1] in self._JAX_MULTI for rel, c in self.calls if rel in own):
            return False
        if names_multi_device((self.wd.read_text(rel) or "" for rel in own), self._JAX_MULTI):
            return False  # also decorators (`@jax.pmap`) and references passed around; not comments
        return bool(self._find_calls("apply_gradients", "value_and_grad", "grad", "update"))

    def _inner_loop_counts(self) -> set[str]:
        """Names the entry script uses as the count of a loop nested in another loop (`for _ in range(n)`
        inside `for batch in collector:`): a per-iteration count, not the run's length."""
        import ast

        text = self.wd.read_text(self.r.entry) if self.r.entry else None
        try:
            tree = ast.parse(text or "")
        except SyntaxError:
            return set()
        out: set[str] = set()

        def visit(node: ast.AST, in_loop: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.For) and in_loop and isinstance(child.iter, ast.Call) \
                        and getattr(child.iter.func, "id", None) == "range" and child.iter.args \
                        and isinstance(child.iter.args[-1], ast.Name):
                    out.add(child.iter.args[-1].id)
                visit(child, in_loop or isinstance(child, ast.For | ast.While | ast.AsyncFor))

        visit(tree, False)
        return out

    def _active(self, call: dict[str, Any]) -> bool | None:
        return self._resolver.truth(call.get("when", []))

    def _find_calls(self, *tails: str, prefix: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        out = []
        for rel, c in self.calls:
            tail = c["func"].rsplit(".", 1)[-1]
            if (
                tail in tails
                and (prefix is None or c["func"].startswith(prefix))
                and self._active(c) is not False
            ):
                out.append((rel, c))
        return out

    def _runtime_values(self) -> None:
        P = self.r.params
        R = self._resolver
        self.lightning: dict[str, tuple[Any, list[str]]] = {}
        self.accel_kw: dict[str, tuple[Any, list[str]]] = {}
        # the keywords of TrainingArguments built in code (None when none is, or one takes `**kwargs`)
        self.hf_args_kw: set[str] | None = None
        for rel, c in self._find_calls("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"):
            if not c.get("spread") and not c["args"]:
                self.hf_args_kw = (self.hf_args_kw or set()) | set(c["kwargs"])
            else:
                self.hf_args_kw = {"**"}
            for k, src in c["kwargs"].items():
                ok, v, ev = R.eval(src)
                if ok:
                    P.set(k, v, [f"{rel}:{c['line']}", *ev], RUNTIME)
        for rel, c in self._find_calls("fit", "fit_generator"):  # Keras-style `model.fit(x, batch_size=32, epochs=10)`
            # the epoch keyword of a library's own `fit` (`trainer.fit(n_epochs=2)`, `clf.fit(max_epochs=50)`)
            for k in ("batch_size", "steps_per_epoch", *(e for e in EPOCHS if e in c["kwargs"])):
                if k in c["kwargs"]:
                    ok, v, ev = R.eval(c["kwargs"][k])
                    if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                        P.set("epochs" if k in EPOCHS else k, v, [f"{rel}:{c['line']}", *ev], RUNTIME)
        open_devices: dict[str, list[str]] = {}
        if self._imports_any("lightning", "pytorch_lightning"):
            for rel, c in self._find_calls("Trainer"):
                for k, src in c["kwargs"].items():
                    if k in LIGHTNING_KW:
                        ok, v, ev = R.eval(src)
                        if ok:
                            self.lightning[k] = (v, [f"{rel}:{c['line']}", *ev])
                        elif k in {"devices", "gpus"} and src.strip() not in {"None", ""}:
                            # `devices=pick_free_gpus(cfg.n)`: set, to a count the sources leave open
                            open_devices.setdefault(k, [f"{rel}:{c['line']}"])
        # a Trainer built from config (`hydra.utils.instantiate(cfg.trainer)` with `_target_: ...Trainer`)
        for key, pv in P.items():
            if key.endswith("._target_") and isinstance(pv.value, str) and pv.value.endswith("Trainer") \
                    and "lightning" in pv.value:
                prefix = key[: -len("._target_")]
                for k in LIGHTNING_KW:
                    got = P.get_path(f"{prefix}.{k}")
                    if got is not None and f"{prefix}.{k}" == got.key and k not in self.lightning:
                        self.lightning[k] = (got.value, got.where)
        # Trainer arguments from the command line or a config (`Trainer.from_argparse_args`, LightningCLI's
        # `trainer:` section, `--gpus 0,1`)
        if self._imports_any("lightning", "pytorch_lightning") and (
                self._find_calls("from_argparse_args", "add_argparse_args", "LightningCLI")
                or any(k.startswith("trainer.") for k, _ in P.items())):
            for k in LIGHTNING_KW:
                got = P.get_path(f"trainer.{k}") or (P.get(k) if k in {"gpus", "devices", "max_epochs",
                                                                       "max_steps", "num_nodes"} else None)
                if got is not None and "." in got.key and not got.key.endswith(f"trainer.{k}"):
                    got = None  # another section's value (`model.max_steps`: a schedule's horizon)
                if got is not None and k not in self.lightning and got.layer >= CODE_DEFAULT:
                    v = got.value
                    if k in {"gpus", "devices"} and isinstance(v, str) and re.fullmatch(r"\d+(,\s*\d+)*,?", v):
                        v = [x for x in v.split(",") if x.strip()] if "," in v else int(v)  # `--gpus 0,1`
                    self.lightning[k] = (v, got.where)
        if not any(k in self.lightning for k in ("devices", "gpus")):
            for k, where in open_devices.items():  # a count no source gives: open (None), never Lightning's default
                self.lightning[k] = (None, where)
        for rel, c in self._find_calls("Accelerator"):
            for k, src in c["kwargs"].items():
                ok, v, ev = R.eval(src)
                if ok:
                    self.accel_kw[k] = (v, [f"{rel}:{c['line']}", *ev])
        # model config objects: GPTConfig(n_layer=...), LlamaConfig(...), dict(n_layer=...); a dimension
        # given different values by different calls (a table of presets) is ambiguous and left out
        dims: dict[str, list[tuple[Any, list[str]]]] = {}
        for rel, c in self.calls:
            tail = c["func"].rsplit(".", 1)[-1]
            kw = set(c["kwargs"])
            whole_lm = bool(kw & set(LAYERS)) and bool(kw & set(HIDDEN)) and bool(kw & set(VOCAB))
            if (
                (re.search(r"(Config|Args|ModelArgs)$", tail) or tail == "dict" or whole_lm)
                and tail not in {"TrainingArguments", "SFTConfig"}
                and self._active(c) is not False
            ):  # a config object, or a language model built from its depth, width and vocabulary (`PaLM(...)`)
                for k, src in c["kwargs"].items():
                    if k in LAYERS + HIDDEN + VOCAB + FFN + EXPERTS:
                        ok, v, ev = R.eval(src)
                        if ok and isinstance(v, int) and not isinstance(v, bool):
                            dims.setdefault(k, []).append((v, [f"{rel}:{c['line']}", *ev]))
        for k, vals in dims.items():
            cur = P.get(k)
            if cur is not None and cur.layer >= CONFIG and not any(
                    w.startswith(f"{self.r.entry}:") for _, ev in vals for w in ev[:1]):
                continue  # the job's config names it; a library's own defaults (a test config) do not replace it
            if len({v for v, _ in vals}) == 1:
                P.set(k, vals[0][0], vals[0][1], RUNTIME)
        # global batch computed in code: `total_batch_size = args.batch_size * args.update_freq * world_size`
        entry_assigns = self.r.py.get(self.r.entry or "", {}).get("assigns", [])
        for a in entry_assigns:
            leaf = a["target"].rsplit(".", 1)[-1]
            if a["op"] is None and leaf in COMPUTED_GLOBAL and (a.get("when") is None or R.truth(a["when"]) is True):
                ok, v, ev = R.eval(a["expr"])
                if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    P.set("global_batch_size", v, [f"{self.r.entry}:{a['line']}", *ev], RUNTIME)
        # durations computed in code: `args.num_iterations = args.total_timesteps // args.batch_size`
        skip = range_start_offsets(self.wd.read_text(self.r.entry) or "") if self.r.entry else {}
        for a in entry_assigns:
            leaf = a["target"].rsplit(".", 1)[-1]
            holder = a["target"].split(".")[0] if "." in a["target"] else None
            if (
                a["op"] is None
                and leaf in COMPUTED_STEPS
                and (
                    (holder is None and a["depth"] > 0) or holder in {"args", "cfg", "config", "opt", "self"}
                )
            ):
                if a.get("when") and R.truth(a["when"]) is not True:
                    continue
                if holder is None and leaf in self._inner_loop_counts():
                    continue  # `for i in range(num_updates)` inside the collection loop: updates per iteration
                if a["expr"].rsplit(".", 1)[-1] in STEPS_PER_EPOCH:
                    continue  # `total_iters = args.iters_per_epoch` in the per-epoch function: one epoch's steps
                ok, v, ev = R.eval(a["expr"])
                if ok and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                    P.set(
                        "train_steps" if leaf in {"steps", "n_iters", "iterations"} else leaf,
                        int(v) - (skip.get(a["target"], 0) if int(v) > skip.get(a["target"], 0) else 0),
                        [f"{self.r.entry}:{a['line']}", *ev],
                        RUNTIME,
                    )
        # an off-policy loop that updates once per iteration after a warm-up: its optimizer steps
        text = self.wd.read_text(self.r.entry) if self.r.entry else None
        got = updates_after_warmup(text, self.r.entry, R) if text else None
        got = got or (loop_from_offset(text, self.r.entry, R, STEPS) if text else None)
        got = got or (chunked_loop_steps(text, self.r.entry, R) if text else None)
        got = got or (fixed_block_epochs(text, self.r.entry, R) if text else None)
        got = got or (fori_block_epochs(text, self.r.entry, R) if text else None)
        for key, n in written_counts(P):  # `--max-updates 100k`, `max_iter: 1e5`: the count as a number
            P.set(key, n, P.get(key).where, P.get(key).layer)
        for key in unbounded_caps(P):  # `max_total_steps = 10**10`: no length, the epochs end the run
            P.set(key, UNBOUNDED, P.get(key).where, P.get(key).layer)
        if got is not None:  # the loop's own length beats the step settings it is computed from
            P.set("loop_train_steps", got[0], got[1], RUNTIME)
        self._step_loop(P, R)
        # settings the entry script overwrites in a branch the run takes (`if args.dataset == "imagenet":
        # args.batch_size = 64`): the parsed value is replaced before training
        # The branches are decided on the values before any of these assignments (`if args.batch_size is None:
        # ... else: args.batch_size //= n` takes one branch), and a setting's own name in its new value is its
        # value before the assignment (`args.batch_size = args.batch_size // total_gpus`)
        taken = []
        for a in entry_assigns:
            parts = a["target"].split(".")
            if a["op"] is not None or len(parts) != 2 or parts[0] not in _SETTINGS_HOLDERS:
                continue
            with R.holding(a["target"]):
                t = R.truth(a["when"]) if a.get("when") else None
            if (a.get("when") and t is not True) or (not a.get("when") and a["depth"] > 0):
                continue  # a branch the run may not take, or a function body the run may not call
            taken.append((a, parts[1]))
        for a, key in taken:
            cur = P.get(key)
            if cur is None or cur.layer >= RUNTIME:
                continue
            with R.holding(a["target"]):
                ok, v, ev = R.eval(a["expr"])
            if ok and isinstance(v, (int, float, str)) and not isinstance(v, bool):
                P.set(key, v, [f"{self.r.entry}:{a['line']}", *ev], RUNTIME)
        # in-place updates of known values (nanoGPT: gradient_accumulation_steps //= ddp_world_size)
        entry = self.r.py.get(self.r.entry or "", {})
        counters = lines_in_loops(text) if text else set()  # `step += 1` in the loop: a counter, not a setting
        for a in entry.get("assigns", []):
            if a["op"] and a["depth"] == 0 and "." not in a["target"] and a["line"] not in counters:
                cur = P.get(a["target"])
                if cur is None or (a.get("when") and R.truth(a["when"]) is False):
                    continue
                ok, v, ev = R.eval(f"({cur.value!r}) {a['op']} ({a['expr']})")
                if ok and isinstance(v, (int, float)):
                    if a["op"] == "//" or isinstance(cur.value, int) and float(v).is_integer():
                        v = int(v)
                    P.set(a["target"], v, [*cur.where, f"{self.r.entry}:{a['line']}", *ev], RUNTIME)

    def _step_loop(self, P: Any, R: Resolver) -> None:
        """The entry script's own training loop over `range(N)` taking one optimizer step per pass
        (`for i in range(NUM_BATCHES): ...; optim.step()`): N steps, when nothing else gives the run length."""
        loops = self.r.py.get(self.r.entry or "", {}).get("step_loops", [])
        if len(loops) != 1 or any(P.get(k) is not None for k in (*STEPS, "train_steps", "loop_train_steps", *EPOCHS)):
            return
        lp = loops[0]
        if re.search(r"epoch|episode", f"{lp['n']} {lp['var']}", re.IGNORECASE):
            return  # a loop over epochs takes many steps per pass; one over episodes is an RL rollout count
        fn = lp.get("function")
        if fn is not None and not re.search(r"main|train|fit|run|loop", fn, re.IGNORECASE):
            return  # a helper or a worker process's body (`def worker(...)` under mp.Process): not the run's loop
        ok, v, ev = R.eval(lp["n"])
        if ok and isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 1 and float(v).is_integer():
            P.set("train_steps", int(v), [f"{self.r.entry}:{lp['line']}", *ev], RUNTIME)

    def _topology(self) -> None:
        r, L = self.r, self.r.launch
        assert L is not None
        self._world: int | None = None
        uses_gpu, gpu_ev = self._uses_gpu()
        self._gpu = uses_gpu
        nodes = L.settings.get("num_nodes")
        ppn = L.settings.get("procs_per_node")
        nprocs = L.settings.get("num_procs")
        lt = self.lightning
        if L.get("single_process"):
            # self-spawning trainers: Lightning (devices, num_nodes), mp.spawn(nprocs=...)
            if "devices" in lt or "gpus" in lt:
                v, ev = lightning_count(lt)  # spread_gpus.py: the command line's over a config's
                n = (
                    v
                    if isinstance(v, int) and not isinstance(v, bool)
                    else (len(v) if isinstance(v, list) else None)
                )
                if n is not None and n > 0:
                    ppn = Setting(n, ev)
                    nprocs = None
                else:  # -1, "auto", or a value the sources leave open (`${device_count:}`): every visible GPU
                    ppn, nprocs = self._visible_devices(), None
            if "num_nodes" in lt:
                v, ev = lt["num_nodes"]
                if isinstance(v, int):
                    nodes = Setting(v, ev)
            for rel, c in self._find_calls("spawn", "start_processes"):
                src = c["kwargs"].get("nprocs") or (c["args"][2] if len(c["args"]) > 2 else None)
                if c["func"].split(".")[0] in {"mp", "torch", "multiprocessing"} and src is not None:
                    ok, v, ev = self._resolver.eval(src)
                    nprocs = None
                    if ok and isinstance(v, int):
                        ppn = self._spawn_count(Setting(v, [f"{rel}:{c['line']}", *ev]))  # devices.py
                    else:
                        ppn = None
            for rel, c in self._find_calls("Process"):  # `for rank in range(n): mp.Process(...).start()`
                if rel == self.r.entry and c["func"].split(".")[0] in {"mp", "torch", "multiprocessing"} \
                        and self._active(c) is not False and self._target_on_gpu(c) \
                        and (n := self._enclosing_range(rel, c["line"])):
                    ppn, nprocs = n, None
            for lib in self._libraries:  # a library's own launcher: detectron2 `launch(main, num_gpus, ...)`
                for sp in lib.spawn:
                    for rel, c in self._find_calls(sp.tail):
                        got = self._spawned(sp, rel, c)
                        if got is not None:
                            ppn, nodes, nprocs = got[0], got[1] or nodes, None
                            uses_gpu = True if uses_gpu is None else uses_gpu  # one process per GPU
                if lib.procs is not None and (n_procs := lib.procs(self.r.params)) is not None:
                    # super-gradients `num_gpus`; a count left open is every visible GPU
                    ppn = Setting(*n_procs) if n_procs[0] is not None else self._visible_devices()
                    nprocs, uses_gpu = None, True
            relaunch = self._python_relaunch()
            if relaunch is not None:  # the entry starts the training script itself, once per visible GPU
                self._relaunched = relaunch
                ppn, nprocs, uses_gpu = self._visible_devices(), None, True
                if ppn is None:
                    r.notes.append(f"num_gpus: {relaunch} starts one training process per visible GPU; "
                                   "the count is set at submission")
            got = self._local_launcher()  # the job's own `launch(main, num_gpus, num_machines)` helper
            if got is not None:
                ppn, nodes, nprocs = got[0], got[1] or nodes, None
                uses_gpu = True if uses_gpu is None else uses_gpu
            elif ppn is L.settings.get("procs_per_node") and (w := self._gpu_worker_launcher()) is not None:
                ppn, nprocs, uses_gpu = self._visible_devices(), None, True  # not one process: one per GPU
                if ppn is None:
                    r.notes.append(f"num_gpus: {w} starts one worker process per visible GPU; the count is "
                                   "decided at run time")
            for rel, c in self._find_calls("update_parameters"):  # submitit: the script submits itself
                kw = c["kwargs"]
                gpn_src = kw.get("gpus_per_node") or kw.get("slurm_gpus_per_node")
                if gpn_src is None:
                    continue
                ok_g, g, ev_g = self._resolver.eval(gpn_src)
                ok_n, n, ev_n = self._resolver.eval(kw.get("nodes", "1"))
                where = [f"{rel}:{c['line']}"]
                ppn = Setting(g, where + ev_g) if ok_g and isinstance(g, int) else None
                nodes = Setting(n, where + ev_n) if ok_n and isinstance(n, int) else None
                nprocs = None
                break
            for rel, c in self._find_calls(*self._data_parallel_tails()):  # DataParallel or a subclass of it
                ids = c["kwargs"].get("device_ids")
                if not c["func"].endswith("DistributedDataParallel") and ids is not None:
                    ok, v, ev = self._resolver.eval(ids)  # DataParallel(model, device_ids=cfg.GPUS)
                    if ok and isinstance(v, str) and re.fullmatch(r"[\[(]?[\d\s,]+[\])]?", v):
                        v = [x for x in v.strip("()[]").split(",") if x.strip()]  # yacs YAML "(0,1,2,3)"
                    if ok and isinstance(v, (list, tuple)) and v:
                        ppn, nprocs = Setting(len(v), [f"{rel}:{c['line']}", *ev]), None
                        self._one_process_many_gpus = f"{rel}:{c['line']}"
                        break
                if not c["func"].endswith("DistributedDataParallel") and "device_ids" not in c["kwargs"]:
                    # one process drives every visible GPU: the count is what the job makes visible, else
                    # it is decided at submission
                    ppn, nprocs = self._visible_devices(), None
                    self._one_process_many_gpus = f"{rel}:{c['line']}"  # its batch is split over the GPUs
                    if ppn is None:
                        r.notes.append(f"num_gpus: {rel}:{c['line']} uses DataParallel over every visible GPU; "
                                       "the count is set at submission")
                    break
            ppn, nprocs, own = self._one_process_gpus(ppn, nprocs)  # devices.py: DataParallel(device_ids=None), --num-gpus
            uses_gpu = True if own else uses_gpu
            if self._imports_any("jax", "flax") and r.val("framework") != "tensorflow":
                if self._jax_one_device():
                    ppn, nprocs, uses_gpu = Setting(1, [f"{self.r.entry}:1"]), None, True
                elif uses_gpu and self._mirrored():
                    ppn, nprocs = self._visible_devices(), None  # one JAX process drives every local device
            elif self._imports_any("tensorflow", "keras") and uses_gpu is not False:
                # (a horovod import does not matter here: one process launched alone is a world of one)
                decided, got = self._tensorflow_devices()
                if decided:
                    ppn, nprocs, uses_gpu = got, None, True
            if self._imports_any("tensorflow") and (tw := self._tf_towers()) is not None:  # TF 1.x towers
                ppn, nprocs, uses_gpu, self._one_process_many_gpus = tw[0], None, True, tw[1]
            if (mg := self._multi_gpu_model()) is not None:  # Keras multi_gpu_model: one process, N GPUs
                ppn, nprocs, uses_gpu, self._one_process_many_gpus = mg[0], None, True, mg[1]
        if nodes is not None and nodes.value is not None:
            r.put("num_nodes", nodes.value, nodes.where)
        if (
            uses_gpu is None
            and L.get("single_process")
            and not self._imports_any("transformers")
            and (self._find_calls("Accelerator") or "devices" in lt)
        ):
            uses_gpu = True  # one process; Accelerate/Lightning put it on the GPU when there is one
        if uses_gpu is False:
            r.put("gpus_per_node", 0, gpu_ev, note="no GPU use in the code")
            r.put("num_gpus", 0, gpu_ev, note="no GPU use in the code")
            self._world = (
                nprocs.value
                if nprocs
                else (ppn.value * nodes.value if ppn and nodes and ppn.value and nodes.value else None)
            )
            return
        if uses_gpu is None and not L.get("distributed_launcher") and not self.lightning:
            return
        gpn_explicit = L.settings.get("gpus_per_node")
        if ppn is not None and ppn.value is not None:
            r.put("gpus_per_node", ppn.value, ppn.where)
        elif gpn_explicit is not None and L.get("single_process") is None and L.get("num_procs") is None:
            r.put("gpus_per_node", gpn_explicit.value, gpn_explicit.where)
        gpn = r.val("gpus_per_node")
        nn = r.val("num_nodes")
        if (
            nprocs is not None
            and nprocs.value is not None
            and (ppn is None or nprocs.value != (ppn.value or 0) * (nn or 0))
        ):
            r.put("num_gpus", nprocs.value, nprocs.where)
            if gpn is None and nn:
                if nprocs.value % nn == 0:
                    r.put("gpus_per_node", nprocs.value // nn, nprocs.where + (nodes.where if nodes else []))
        elif gpn is not None and nn is not None:
            r.put(
                "num_gpus",
                gpn * nn,
                self.r.facts["gpus_per_node"].evidence + self.r.facts["num_nodes"].evidence,
            )
        self._world = r.val("num_gpus")
