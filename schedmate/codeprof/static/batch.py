"""Batch sizes, accumulation, sequence length, steps/epochs and precision."""

from __future__ import annotations

import math
import re
from typing import Any

from schedmate.codeprof.launch import to_int
from schedmate.codeprof.params import CODE_DEFAULT, LIBRARY_DEFAULT, RUNTIME, training_leaf
from schedmate.codeprof.shell.values import is_unknown
from schedmate.codeprof.static.batch_units import BatchUnitsMixin, accumulation_by_name, per_rank_micro
from schedmate.codeprof.static.darknet_batch import darknet_micro_batch
from schedmate.codeprof.static.ds_auto_accum import ds_auto_accumulation
from schedmate.codeprof.static.jax_batch import host_loader_batch
from schedmate.codeprof.static.lightning_epochs import epochs_unlimited_in_code
from schedmate.codeprof.static.loader_batch import (
    loader_batch_expr,
    loader_global,
    training_loaders,
    with_training_branches,
)
from schedmate.codeprof.static.names import (
    ACCUM,
    EPOCHS,
    FUZZY,
    GLOBAL,
    LOOKALIKE,
    LOOKALIKE_HELP,
    MICRO,
    STEPS,
    STEPS_PER_EPOCH,
)
from schedmate.codeprof.static.nominal_accum import nominal_accumulation
from schedmate.codeprof.static.result import precision_word
from schedmate.codeprof.static.rl_batch import rl_batches
from schedmate.codeprof.static.sampler_split import (
    split_by_sampler,
    split_loader_batch,
    splits_over_processes,
)
from schedmate.codeprof.static.seq_len import sequence_length
from schedmate.codeprof.static.step_guard_accum import step_guard_accumulation

# a batch size divided by the number of processes or GPUs
_SPLIT_OVER_PROCESSES = re.compile(
    r"batch_?size\w*\)?\s*//?\s*\(?\s*(?:max\(\s*1\s*,\s*)?[\w.]*?"
    r"(?:world_size|num_gpus?|n_?gpus|ngpus_per_node|nprocs|num_processes|num_replicas|device_count|"
    r"get_world_size)\b",
    re.IGNORECASE)




class BatchMixin(BatchUnitsMixin):
    """Batch sizes, accumulation, sequence length, steps/epochs and precision."""

    _loader_global: tuple[int, list[str]] | None = None  # a one-process loader's batch, before accumulation

    def _first(
        self, names: tuple[str, ...], min_layer: int = LIBRARY_DEFAULT
    ) -> tuple[Any, list[str]] | None:
        for n in names:
            pv = self._dotted(n) if "." in n else self.r.params.get(n)
            if (
                pv is not None
                and pv.layer >= min_layer
                and pv.value is not None
                and not isinstance(pv.value, (dict, list, tuple, set))
            ):
                return pv.value, pv.where
        return None

    def _dotted(self, name: str) -> Any:
        """A dotted name (`train_dataloader.batch_size`) as the full key or the tail of one, never its bare
        leaf (`training.steps` must not find a scheduler's `solver.steps`)."""
        P = self.r.params
        exact = P.get_path(name)
        if exact is not None and (exact.key == name or exact.key.endswith("." + name)):
            return exact
        tail = "." + name
        hits = [pv for k, pv in P.items() if k.endswith(tail)]
        return hits[0] if len({repr(h.value) for h in hits}) == 1 else None

    def _fuzzy(self, kind: str) -> tuple[Any, list[str]] | None:
        """The one value the job's own settings give under a name of this kind when no listed name was
        found; None when there is none or they disagree (a guess between look-alikes is no answer)."""
        pattern = FUZZY[kind]
        hits: dict[int, list[str]] = {}
        for key, pv in self.r.params.items():
            leaf = key.rsplit(".", 1)[-1]
            if pv.layer < CODE_DEFAULT or not pattern.match(leaf) or LOOKALIKE.search(key) or not training_leaf(key) \
                    or LOOKALIKE_HELP.search(self._help_of(key)):
                continue
            v = to_int(pv.value)
            if v is not None and v > 0:
                hits.setdefault(v, pv.where)
        if len(hits) == 1:
            ((v, where),) = hits.items()
            return v, where
        return None

    def _help_of(self, key: str) -> str:
        """The argparse help text of the option stored under `key` ('' for other settings)."""
        for s in self.r.py.values():
            for a in s["argparse"]:
                if a["dest"].lower() == key:
                    return a.get("help") or ""
        return ""

    def _help_says_per_device(self, found: tuple[Any, list[str]] | None) -> bool:
        """The option behind `found` is documented as a per-device batch (`help='batch size per compute
        device'`)."""
        if found is None:
            return False
        for rel, s in self.r.py.items():
            for a in s["argparse"]:
                if f"{rel}:{a['line']}" in found[1] or (a["dest"] == "batch_size" and "cmd" in found[1]):
                    if re.search(r"per[ -](gpu|device|compute device|replica|tower|core|worker|process)",
                                 (a.get("help") or "").lower()):
                        return True
        return False

    def _help_says_total(self, found: tuple[Any, list[str]] | None) -> str | None:
        """file:line of the argparse option behind `found` when its help calls it the total over all GPUs
        (`--batch-size ... help='total batch size for all GPUs'`)."""
        if found is None:
            return None
        names = {n for n in MICRO if (pv := self.r.params.get(n)) is not None and pv.where == found[1]}
        for rel, s in self.r.py.items():
            for a in s["argparse"]:
                if a["dest"] in names or f"{rel}:{a['line']}" in found[1]:
                    help_text = (a.get("help") or "").lower()
                    if re.search(r"\b(total|global|effective)\b[^.]*batch|for all (gpus|devices|processes)"
                                 r"|across (all )?(gpus|devices|processes)", help_text) and not re.search(
                                     r"per[ -](gpu|device|process|replica|model instance)|\blocal batch",
                                     help_text):  # Megatron's "Batch size per model instance (local batch
                        # size). Global batch size is local batch size times ..." describes a micro batch
                        return f"{rel}:{a['line']}"
        return None

    def _divided_by_world(self) -> str | None:
        """file:line where the code splits a configured batch over the processes or GPUs
        (`batch_size // world_size`, `int(cfg.TRAIN.BATCH_SIZE / max(1, cfg.NUM_GPUS))`,
        `args.batch_size = int(args.batch_size / args.world_size)`): the configured batch is the total."""
        for rel, s in self.r.py.items():
            for a in s["assigns"]:
                text = f"{a['target']} // {a['expr']}" if a["op"] in ("//", "/") else a["expr"]  # `bs //= world`
                if re.search(r"batch", a["target"], re.IGNORECASE) and splits_over_processes(text, self.r.py):
                    held = self.r.params.get(a["target"].rsplit(".", 1)[-1])
                    if held is not None and held.layer >= RUNTIME and not any(
                            w.startswith(f"{rel}:") and w == f"{rel}:{a['line']}" for w in held.where) \
                            and any(w.startswith(f"{rel}:") for w in held.where):
                        continue  # the run set this setting in another branch: this split is not taken
                    return f"{rel}:{a['line']}"
        return None

    def _micro_from_code(self, fw: Any) -> tuple[Any, list[str]] | None:
        """The per-process batch from the framework's names, the training DataLoader, TF/JAX global batches
        and the job's own names (a total the code splits over the processes becomes the global batch)."""
        r = self.r
        R = self._resolver
        micro = None
        if micro is None and fw in {"hf-trainer"}:
            micro = self._first(("per_device_train_batch_size",))
        if micro is None and fw == "megatron":
            micro = self._first(("micro_batch_size",))
        if micro is None:
            loaders = with_training_branches(self._find_calls("DataLoader"), self.calls) + self._datamodules()
            # never a validation loader's batch for a training loader's unknown one
            for rel, c in training_loaders(loaders, self.r.py):
                if (expr := loader_batch_expr(c, self.r.py.get(rel))) is not None:
                    ok, v, ev = R.eval(expr)
                    if ok and isinstance(v, int) and not isinstance(v, bool):
                        micro = (v, [f"{rel}:{c['line']}", *ev])
                        micro = host_loader_batch(self, micro) if fw == "jax" else micro  # per host, not device
                        if fw != "jax":  # `cfg.batch_size = int(cfg.batch_size / n_gpus)` before the loader
                            micro = split_loader_batch(self, micro)[0]
                        break
        if micro is None and fw == "tensorflow":
            micro = self._fit_local_batch()  # `batch_size = 32` handed to a generator-fed fit
        if micro is None and fw in {"tensorflow", "jax"}:
            per = self._first(
                (
                    "batch_size_per_replica",
                    "per_device_batch_size",
                    "batch_size_per_device",
                    "per_replica_batch_size",
                )
            )
            estimator_strategy = fw == "tensorflow" and any(
                "train_distribute" in c["kwargs"] for _, c in self._find_calls("RunConfig"))
            if per is not None:
                micro = per
            elif self._help_says_per_device(b := self._first(("batch_size",))):
                micro = b  # documented as per device (tf_cnn_benchmarks' --batch_size)
            elif (b := self._per_replica_batch()) is not None:
                micro = b  # `FLAGS.batch_size * strategy.num_replicas_in_sync`: per replica
            elif estimator_strategy and (b := self._first(("train_batch_size", "batch_size"))) is not None:
                micro = b  # TF 1.x Estimator with a distribution strategy: input_fn's batch is per replica
            else:
                g = self._first(("global_batch_size", "training.batch_size", "batch_size", "train_batch_size", "batch"))
                if g is not None and self._one_process_many_gpus:
                    return g  # one process feeds every GPU (Keras multi_gpu_model): the caller splits it once
                if g is not None and self._world and isinstance(g[0], int) and g[0] % self._world == 0:
                    micro = (g[0] // self._world, g[1])
                if g is not None and to_int(g[0]) and (fw == "jax" or self._world):
                    # JAX pipelines and TF strategies / estimators take the global batch and split it
                    r.put("global_batch_size", to_int(g[0]), g[1], note=f"{fw}: the batch is the global batch")
        if micro is None and fw not in {"tensorflow", "jax"}:
            micro = self._first(MICRO) or self._fuzzy("micro") or per_rank_micro(r.params)
            split = self._divided_by_world() or self._help_says_total(micro) or split_by_sampler(self, micro)
            applied = next((pv for _, pv in r.params.items() if split is not None and split in pv.where
                            and pv.layer >= RUNTIME and to_int(pv.value)), None)
            if applied is not None:  # the entry already divided the setting: it holds the per-process batch
                micro, split = (applied.value, list(applied.where)), None
            if micro is not None and split is not None and to_int(micro[0]):
                # the code divides this batch size over the processes: it is the global batch
                r.put("global_batch_size", to_int(micro[0]), [*micro[1], split])
                micro = ((to_int(micro[0]) // self._world, [*micro[1], split])
                         if self._world and to_int(micro[0]) % self._world == 0 else None)
        if micro and (held := self._undivided(micro)) is not None and (self._world or 1) > 1:
            # the split used a world-size option's default of 1, which the launch replaces with its world
            r.put("global_batch_size", to_int(held.value), [*held.where, *micro[1]])
            micro = (to_int(held.value) // self._world, micro[1]) if to_int(held.value) % self._world == 0 else None
        return micro

    def _split_setting(self) -> tuple[Any, list[str]] | None:
        """The configured batch the code splits over the processes (`cfg.dataset.train_batch_size //
        dist.get_world_size()`): that setting is the global batch."""
        for rel, s in self.r.py.items():
            for a in s["assigns"]:
                m = _SPLIT_OVER_PROCESSES.search(a["expr"])
                if not m or not re.search(r"batch", a["target"], re.IGNORECASE):
                    continue
                name = re.search(r"([\w.]*batch_?size\w*)\)?\s*//?", a["expr"], re.IGNORECASE)
                if name is None:
                    continue
                held = self.r.params.get_path(name.group(1).split(".", 1)[-1])
                if held is not None and held.layer >= RUNTIME and any(w.startswith(f"{rel}:") for w in held.where):
                    continue  # the run already divided the setting, or set it in another branch
                ok, v, ev = self._resolver.eval(name.group(1))
                if ok and to_int(v) and to_int(v) > 0:
                    return to_int(v), [*ev, f"{rel}:{a['line']}"]
            for c in s.get("calls", []):  # `DataLoader(ds, batch_size=batch_size // num_gpus)`: the same split
                src = c["kwargs"].get("batch_size") or ""  # the split alone: `// world_size * 2` is an eval loader
                if not re.fullmatch(r"\(?\s*[\w.]+\s*\)?\s*//\s*[\w.()]+\s*", src) \
                        or not _SPLIT_OVER_PROCESSES.search(src) or self._active(c) is False:
                    continue
                ok, v, ev = self._resolver.eval(re.split(r"\)?\s*//?", src, maxsplit=1)[0].lstrip("( "))
                if ok and to_int(v) and to_int(v) > 0:
                    return to_int(v), [*ev, f"{rel}:{c['line']}"]
        return None

    def _batch_and_length(self) -> None:
        r = self.r
        fw = r.val("framework")  # (a torch loop importing TF is ranked pytorch: static/torch_with_tf.py)
        self._batches_in_other_units()
        # micro batch --------------------------------------------------------------------
        micro = None
        if self._ds_value("train_micro_batch_size_per_gpu"):
            micro = self._ds_value("train_micro_batch_size_per_gpu")
        lib_batch = next((lib for lib in self._libraries if lib.batch is not None), None)
        if micro is None and lib_batch is not None:  # a library's own batch semantics (ultralytics' nbs)
            got = lib_batch.batch(self.r.params, self._world)
            for key in ("grad_accum_steps", "global_batch_size"):
                if key in got:
                    r.put(key, got[key][0], got[key][1], note=f"{lib_batch.name} batch convention")
            micro = got.get("micro_batch_size")
        if micro is None and lib_batch is None:
            micro = darknet_micro_batch(self) or self._micro_from_code(fw)  # a Darknet cfg's [net] the code reads
        if micro is not None and self._one_process_many_gpus and to_int(micro[0]) and (
                self._help_says_per_device(micro) or self._named_per_device(micro)):
            if self._world:  # one replica per GPU, each fed the batch named/documented per GPU: global = micro x GPUs
                r.put("global_batch_size", to_int(micro[0]) * self._world, [*micro[1], self._one_process_many_gpus])
                self._loader_global = (to_int(micro[0]) * self._world, [*micro[1], self._one_process_many_gpus])
        elif micro is not None and self._one_process_many_gpus and to_int(micro[0]):
            # one process feeds every GPU (DataParallel): its loader's batch is the global batch
            where = [*micro[1], self._one_process_many_gpus]
            r.put("global_batch_size", to_int(micro[0]), where)
            self._loader_global = (to_int(micro[0]), where)  # x accumulation below
            micro = ((to_int(micro[0]) // self._world, where)
                     if self._world and to_int(micro[0]) % self._world == 0 else None)
        if micro is not None:
            r.put("micro_batch_size", to_int(micro[0]), micro[1])
        # accumulation -----------------------------------------------------------------------
        accum = self._ds_value("gradient_accumulation_steps")
        if accum is None and "accumulate_grad_batches" in self.lightning:
            accum = self.lightning["accumulate_grad_batches"]
        if accum is None and "gradient_accumulation_steps" in self.accel_kw:
            accum = self.accel_kw["gradient_accumulation_steps"]
        if accum is None and self.r.launch and self.r.launch.get("grad_accum"):
            accum = (self.r.launch.get("grad_accum"), self.r.launch.settings["grad_accum"].where)
        if accum is None:
            accum = self._first(ACCUM) or accumulation_by_name(r.params) or nominal_accumulation(self) \
                or step_guard_accumulation(self) or ds_auto_accumulation(self)  # a DeepSpeed "auto" nothing else fills: 1
        if accum is not None and to_int(accum[0]) is not None:
            r.put("grad_accum_steps", max(1, to_int(accum[0])), accum[1])  # 0 (Swin-style) accumulates nothing
            loader_global(self, max(1, to_int(accum[0])), accum[1])
        gb = self._ds_value("train_batch_size") or self._first(GLOBAL) or self._split_setting()
        if gb is not None:
            r.put("global_batch_size", to_int(gb[0]), gb[1])
        rl_batches(self)  # RL: unrolls x unroll length; a run-config dict's minibatch
        # sequence length ---------------------------------------------------------------------
        seq = sequence_length(self)
        if seq is not None and to_int(seq[0]):
            r.put("seq_len", to_int(seq[0]), seq[1])
            self._batches_in_tokens()
        # duration ------------------------------------------------------------------------------
        steps = None
        fast = self.lightning.get("fast_dev_run")
        if fast is not None and fast[0] is not False and (to_int(fast[0]) or 0) > 0:
            # Lightning's fast_dev_run: True runs one training batch, N runs N, and no epochs
            n = 1 if fast[0] is True else to_int(fast[0])
            r.put("train_steps", n, [*fast[1], "lightning fast_dev_run"])
            return
        if "max_steps" in self.lightning and to_int(self.lightning["max_steps"][0]) not in (None, -1):
            steps = self.lightning["max_steps"]
        explicit_epochs = "max_epochs" in self.lightning and "lightning Trainer default" not in self.lightning[
            "max_epochs"][1] and "max_steps" not in self.lightning
        hf_kw = getattr(self, "hf_args_kw", None)
        # TrainingArguments built in code with its keywords spelled out and no max_steps: the Trainer runs its
        # epochs, and a step count elsewhere (`--num-training-steps` for a scheduler) is not the run length
        hf_epochs = hf_kw is not None and "**" not in hf_kw and "max_steps" not in hf_kw
        if steps is None and not explicit_epochs and not hf_epochs:
            # (a Lightning Trainer told its max_epochs and no max_steps stops at those epochs: a `max_steps`
            # elsewhere in its config is a schedule's horizon)
            steps = self._first(("loop_train_steps",)) or self._first(STEPS) or self._fuzzy("steps")
            steps = None if self._is_per_epoch(steps) else steps  # `fit(steps_per_epoch=args.steps)`
        duration = self._first(("max_duration", "train_duration"))
        unit = re.fullmatch(r"\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*(ba|ep)\s*", str(duration[0])) if duration else None
        if steps is None and unit and unit.group(2) == "ba":  # Composer: `max_duration: 4800ba` (batches)
            steps = (int(float(unit.group(1))), duration[1])  # type: ignore[index]
        epochs = self.lightning.get("max_epochs") or self._first(EPOCHS) or self._fuzzy("epochs")
        if epochs is None and steps is None and r.val("framework") == "lightning" and self.lightning \
                and not epochs_unlimited_in_code(r.py):  # (`args.max_epochs = -1`: no limit, no default)
            # Lightning's Trainer runs 1000 epochs when given neither max_epochs nor max_steps
            epochs = (1000, [self.lightning[next(iter(self.lightning))][1][0], "lightning Trainer default"])
        if epochs is None and steps is None:
            epochs = self._epoch_loop()
        per_epoch = self._first(STEPS_PER_EPOCH)
        both = steps is None and per_epoch is not None and epochs is not None and (to_int(per_epoch[0]) or 0) > 0 \
            and (to_int(epochs[0]) or 0) > 0  # a fixed number of steps per "epoch" (a cap, or a block of steps)
        if both:  # the run is that many steps times the epochs; its epochs are passes only when counted so
            steps = (to_int(per_epoch[0]) * to_int(epochs[0]), [*per_epoch[1], *epochs[1]])
            both = self._a_pass(per_epoch)
        if steps is not None and (to_int(steps[0]) or 0) > 0:
            r.put("train_steps", to_int(steps[0]), steps[1])
        if epochs is None and unit and unit.group(2) == "ep":
            epochs = (float(unit.group(1)), duration[1])  # type: ignore[index]
        if steps is not None and is_unknown(str(steps[0])):
            # a step count set from a value the sources leave open (`--max_steps $N`): it may override the
            # epochs (as HF's max_steps does), so the run length is unknown, not the epochs' default
            epochs = None
        if epochs is not None and (r.val("train_steps") is None or both):
            e = epochs[0]
            if isinstance(e, float) and e.is_integer():
                e = int(e)
            repeat = self._repeated_dataset()
            if repeat is not None and isinstance(e, int):  # OpenMMLab RepeatDataset: each epoch is N passes
                e, epochs = e * repeat[0], (e * repeat[0], [*epochs[1], *repeat[1]])
            if isinstance(e, (int, float)) and math.isfinite(e) and e > 0:  # 12.1 or HF's 0.5 epochs stay
                r.put("epochs", e, epochs[1])

    _EPOCH_LOOP = re.compile(r"^\s*for\s+(?:epoch|ep|epoch_?(?:idx|id|num|i|no))\s+in\s+"
                             r"(?:tqdm\.)?(?:t|tqdm\.)?range\(\s*(?:([\w.]+)\s*,\s*)?((?:\1\s*\+\s*)?[\w.]+)\s*\)")

    def _epoch_loop(self) -> tuple[int, list[str]] | None:
        """The epochs of a training loop written out in the job's code (`for epoch in range(10):`), when no
        setting names them: the entry script first, then the files it imports."""
        order = sorted(self.r.py, key=lambda rel: rel != self.r.entry)
        for rel in order:
            for k, text in enumerate((self.wd.read_text(rel) or "").splitlines(), 1):
                m = self._EPOCH_LOOP.match(text)
                if not m:
                    continue
                ok, end, ev = self._resolver.eval(m.group(2).split("+")[-1])
                # `range(start_epoch, start_epoch + 200)`: 200 epochs wherever a resumed run starts
                ok0, start, ev0 = self._resolver.eval(m.group(1)) if m.group(1) and "+" not in m.group(2) else (True, 0, [])
                if ok and ok0 and isinstance(end, int) and isinstance(start, int) and end - start > 0:
                    return end - start, [f"{rel}:{k}", *ev0, *ev]
        return None

    def _repeated_dataset(self) -> tuple[int, list[str]] | None:
        """`times` of an OpenMMLab `RepeatDataset` wrapping the training set (2.x `train_dataloader.dataset`,
        1.x `data.train`): one trainer epoch is that many passes over the data."""
        for prefix in ("train_dataloader.dataset", "data.train"):
            kind, times = self._dotted(f"{prefix}.type"), self._dotted(f"{prefix}.times")
            if kind is not None and kind.value == "RepeatDataset" and times is not None \
                    and to_int(times.value) and to_int(times.value) > 1:
                return to_int(times.value), times.where  # type: ignore[return-value]
        return None

    def _precision(self) -> None:
        r, P = self.r, self.r.params
        R = self._resolver

        def put(v: str, where: list[str]) -> None:
            r.put("precision", v, where)

        for key in ("bf16.enabled", "bfloat16.enabled", "fp16.enabled"):
            got = self._ds_value(key)
            if got is not None and got[0] is True:
                return put("fp16" if key.startswith("fp16") else "bf16", got[1])
        for k in ("fp8", "bf16", "fp16"):
            pv = P.get(k)
            if pv is not None and pv.value is True and pv.layer >= CODE_DEFAULT:
                return put(k, pv.where)
        mp = None
        L = r.launch
        if "mixed_precision" in self.accel_kw:
            mp = self.accel_kw["mixed_precision"]
        elif L is not None and L.get("mixed_precision"):
            mp = (L.get("mixed_precision"), L.settings["mixed_precision"].where)
        if mp is None:
            pv = P.get(
                "mixed_precision",
                "mixed_precision_param",
                "amp_dtype",
                "precision",
                "dtype",
                "torch_dtype",
                "param_dtype",
                "compute_dtype",
            )
            if pv is not None and pv.layer >= CODE_DEFAULT:
                mp = (pv.value, pv.where)
        if "precision" in self.lightning:
            mp = self.lightning["precision"]
        if mp is not None:
            v = precision_word(mp[0])
            if v:
                return put(v, mp[1])
        # code patterns ----------------------------------------------------------------
        found: list[tuple[str, list[str]]] = []
        for rel, c in self.calls:
            if self._active(c) is False:
                continue
            tail = c["func"].rsplit(".", 1)[-1]
            ev = [f"{rel}:{c['line']}"]
            kw = c["kwargs"]
            if "enabled" in kw:
                ok, v, _ = R.eval(kw["enabled"])
                if ok and not v:
                    continue
                if not ok:
                    continue
            if tail in {"fp8_autocast"} or "float8" in c["func"].lower():
                found.append(("fp8", ev))
            elif tail == "autocast" or tail == "MixedPrecision" or tail == "MixedPrecisionPolicy":
                dt = (
                    kw.get("dtype")
                    or kw.get("param_dtype")
                    or next((a for a in c["args"] if "float" in a), None)
                )
                if dt:
                    ok, v, _ = R.eval(dt)
                    w = precision_word(v) if ok else None
                    if w:
                        found.append((w, ev))
                elif tail == "autocast" and "cpu" not in " ".join(c["args"]):
                    found.append(("fp16", ev))
            elif tail == "GradScaler" or tail == "half" and not c["args"]:
                found.append(("fp16", ev))
            elif tail in {"to", "from_pretrained"}:
                for a in [*c["args"], kw.get("dtype", ""), kw.get("torch_dtype", "")]:
                    if a in {"torch.bfloat16", "torch.float16"}:
                        found.append(("bf16" if "bfloat" in a else "fp16", ev))
            elif tail == "set_global_policy" and c["args"]:
                ok, v, _ = R.eval(c["args"][0])
                if ok and isinstance(v, str) and "mixed" in v:
                    found.append(("bf16" if "bfloat" in v else "fp16", ev))
        for w in ("fp8", "bf16", "fp16"):
            hits = [e for p, e in found if p == w]
            if hits:
                return put(w, [x for h in hits[:3] for x in h])
        # low-precision dtypes named elsewhere (e.g. a Flax module's `dtype = jnp.bfloat16`), outside the
        # calls found disabled above: one kind -> that precision; several -> undecided
        disabled = {(rel, c["line"]) for rel, c in self.calls if self._disabled(c)}
        refs: dict[str, list[str]] = {}
        for rel, s in self.r.py.items():
            for d in s.get("dtype_refs", []):
                if (rel, d["line"]) not in disabled:
                    refs.setdefault(d["dtype"], []).append(f"{rel}:{d['line']}")
        if len(refs) == 1:
            ((w, where),) = refs.items()
            return put(w, where[:3])
        if len(refs) > 1:
            return
        if self.r.py and self.r.entry in self.r.py:
            r.put(
                "precision",
                "fp32",
                [f"{self.r.entry}:1"],
                note="no mixed-precision setting found in the code read",
            )
