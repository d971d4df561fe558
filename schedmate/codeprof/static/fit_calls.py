"""One process over many GPUs and the run length of Keras-style `fit` calls, as plain scripts write them.

- `nn.DataParallel` and the job's own subclasses of it (`class BalancedDataParallel(DataParallel)`), and
  Keras' `multi_gpu_model(model, gpus=...)`: one process drives several GPUs and splits each batch.
- TF 1.x towers: `tf.split(batch, FLAGS.num_gpus)` with one tower per GPU: one process, the batch split.
- `model.fit(..., steps_per_epoch=args.steps, epochs=args.epochs)`: the setting passed as `steps_per_epoch`
  is a per-epoch count whatever its name, so the run is that many steps times the epochs.
- `per_gpu = args.batch_size // args.world_size` evaluated with the option's default world of 1 (the launcher
  sets the real one at run time): the batch is the total, split over the launched world.
- `batch_size = 32` in the function that calls `fit_generator(gen(lines, batch_size, ...))`: the batch a
  generator-fed fit trains on when no keyword names it.
- `GLOBAL_BATCH = FLAGS.batch_size * strategy.num_replicas_in_sync` (TensorFlow's documented
  `BATCH_SIZE_PER_REPLICA * num_replicas_in_sync`): the configured batch is the per-replica one.
- TF 1.x towers written as `for i in range(args.nr_gpu): with tf.device('/gpu:%d' % i): ...`: one replica
  per GPU, the loop's count is the GPU count.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import Setting
from schedmate.codeprof.params import RUNTIME
from schedmate.codeprof.static.batch_times_devices import device_times_batch

_BATCH_LOCAL = re.compile(r"^(batch_size|batch|bs|BATCH_SIZE)$")
_SPLIT_LIST = re.compile(r"([\w.]+)\.split\(\s*['\"],['\"]\s*\)")
# `<batch setting> * <replica count>`: the setting multiplied up to the global batch is a per-replica batch
_TIMES_REPLICAS = re.compile(
    r"([\w.]*batch_?size\w*)\s*\*\s*\(?\s*[\w.]*?(?:(?:num_replicas_in_sync|num_replicas|world_size|num_gpus?|"
    r"n_?gpus?|nr_gpus?|num_devices)\b|(?:local_)?device_count\(\))", re.IGNORECASE)


class FitCallsMixin:
    r: Any
    _resolver: Any
    _find_calls: Any  # RuntimeMixin's
    _active: Any
    calls: Any

    def _data_parallel_tails(self) -> tuple[str, ...]:
        """`DataParallel` and the names of the job's classes built on it, directly or through one another
        (never `DistributedDataParallel`, which is one process per GPU)."""
        names = {"DataParallel", "MMDataParallel"}  # mmcv's MMDataParallel is a DataParallel
        classes = [c for s in self.r.py.values() for c in s.get("classes", [])]
        grew = True
        while grew:
            grew = False
            for c in classes:
                if c["name"] not in names and c["name"] != "DistributedDataParallel" \
                        and any(b.rsplit(".", 1)[-1] in names for b in c["bases"]):
                    names.add(c["name"])
                    grew = True
        return tuple(sorted(names))

    def _multi_gpu_model(self) -> tuple[Setting | None, str] | None:
        """Keras `multi_gpu_model(model, gpus=...)`: (the GPU count when the sources give it, file:line).
        `gpus` is a count, a list of ids, or the ids parsed from a comma-separated option
        (`list(map(int, args.gpu.split(',')))`)."""
        for rel, c in self._find_calls("multi_gpu_model"):
            src = c["kwargs"].get("gpus") or (c["args"][1] if len(c["args"]) > 1 else None)
            where = f"{rel}:{c['line']}"
            if src is None:
                return None, where
            ok, v, ev = self._resolver.eval(src)
            if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return Setting(v, [where, *ev]), where
            if ok and isinstance(v, (list, tuple)) and v:
                return Setting(len(v), [where, *ev]), where
            m = _SPLIT_LIST.search(src)
            if m:
                ok, v, ev = self._resolver.eval(m.group(1))
                if ok and isinstance(v, (str, int)) and not isinstance(v, bool):
                    ids = [x for x in str(v).split(",") if x.strip()]
                    return Setting(len(ids), [where, *ev]), where
            return None, where
        return None

    def _named_per_device(self, found: tuple[Any, list[str]]) -> bool:
        """`found` is the value of a setting whose name says it is per GPU (`data.imgs_per_gpu`,
        `TRAIN.BATCH_SIZE_PER_GPU`, `per_device_train_batch_size`)."""
        return any(pv.where == found[1] and re.search(r"per_?(gpu|device|replica)", k, re.IGNORECASE)
                   for k, pv in self.r.params.items())

    def _datamodules(self) -> list[tuple[str, dict[str, Any]]]:
        """Calls building a Lightning-style data module with a batch (`MyDataModule(batch_size=4, ...)`): by
        Lightning's convention its `batch_size` is the batch of each process's training loader."""
        return [(rel, c) for rel, c in self.calls if c["func"].rsplit(".", 1)[-1].endswith("DataModule")
                and "batch_size" in c["kwargs"] and self._active(c) is not False]

    def _per_replica_batch(self) -> tuple[Any, list[str]] | None:
        """The configured batch setting the code multiplies by the replica count to get the global batch
        (`BATCH_SIZE = FLAGS.batch_size * strategy.num_replicas_in_sync`): that setting, a per-replica batch."""
        for rel, s in self.r.py.items():
            for a in s["assigns"]:
                m = _TIMES_REPLICAS.search(a["expr"]) if re.search(r"batch", a["target"], re.IGNORECASE) else None
                if m is None or a.get("op"):
                    continue
                held = self.r.params.get_path(m.group(1).split(".", 1)[-1])
                if held is not None and isinstance(held.value, int) and not isinstance(held.value, bool):
                    return held.value, [*held.where, f"{rel}:{a['line']}"]
        # `ds.batch(num_devices * batch_size)`: the same, written in the input pipeline (batch_times_devices.py)
        return device_times_batch(self.r.py, self.wd.read_text, self.calls, self._resolver)

    def _tf_towers(self) -> tuple[Setting, str] | None:
        """TF 1.x multi-tower training: the batch `tf.split` over a count named for GPUs, cores or towers
        (`tf.split(features, FLAGS.num_core_per_host, 0)`), one model replica per piece on its own GPU; or
        a `for i in range(n)` loop building one tower per GPU under `tf.device('/gpu:%d' % i)`."""
        for rel, s in self.r.py.items():
            for loop in s.get("device_loops", []):
                ok, v, ev = self._resolver.eval(loop["n"])
                if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    return Setting(v, [f"{rel}:{loop['line']}", *ev]), f"{rel}:{loop['line']}"
        for rel, c in self._find_calls("split", prefix="tf."):
            src = c["kwargs"].get("num_or_size_splits") or (c["args"][1] if len(c["args"]) > 1 else "")
            if not re.search(r"(gpu|core|tower|replica)s?(_per_host)?\b", src, re.IGNORECASE):
                continue
            ok, v, ev = self._resolver.eval(src)
            if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return Setting(v, [f"{rel}:{c['line']}", *ev]), f"{rel}:{c['line']}"
        return None

    def _undivided(self, micro: tuple[Any, list[str]]) -> Any:
        """The configured batch (never re-set in code) that the split over the world `micro` came from left
        whole, as a world-size default of 1 does: that setting, else None."""
        split = self._divided_by_world()  # type: ignore[attr-defined]
        if split is None or split not in micro[1]:
            return None
        rel, line = split.rsplit(":", 1)
        a = next((a for a in self.r.py.get(rel, {}).get("assigns", []) if str(a["line"]) == line), None)
        m = re.search(r"([\w.]*batch_?size\w*)\)?\s*//?", a["expr"], re.IGNORECASE) if a else None
        held = self.r.params.get_path(m.group(1).split(".", 1)[-1]) if m else None
        if held is None or held.layer >= RUNTIME or held.value != micro[0]:
            return None
        return held

    def _fit_per_epoch_names(self) -> set[str]:
        """Leaf names of the settings a Keras-style `fit` takes as `steps_per_epoch` (`args.steps`): those
        count steps per epoch, not the run, even under a run-length name."""
        out: set[str] = set()
        for _, c in self._find_calls("fit", "fit_generator"):
            src = c["kwargs"].get("steps_per_epoch", "")
            if re.fullmatch(r"[A-Za-z_][\w.]*", src):
                out.add(src.rsplit(".", 1)[-1].lower())
        return out

    def _is_per_epoch(self, found: tuple[Any, list[str]] | None) -> bool:
        """`found` is the value of a setting a `fit` call takes as its steps per epoch."""
        if found is None:
            return False
        for name in self._fit_per_epoch_names():
            pv = self.r.params.get(name)
            if pv is not None and pv.where == found[1] and pv.value == found[0]:
                return True
        return False

    def _fit_local_batch(self) -> tuple[int, list[str]] | None:
        """The batch a generator-fed `fit` trains on: the last `batch_size = N` before the call in the
        function that makes it, when the call passes that name on (`fit_generator(gen(lines, batch_size))`)."""
        for rel, c in self._find_calls("fit", "fit_generator"):
            if "batch_size" in c["kwargs"]:
                continue
            text = " ".join([*c["args"], *c["kwargs"].values()])
            s = self.r.py.get(rel, {})
            fn = next((f for f in s.get("functions", []) if f["line"] <= c["line"] <= (f["end"] or 0)), None)
            if fn is None:
                continue
            local = [a for a in s.get("assigns", [])
                     if _BATCH_LOCAL.match(a["target"]) and fn["line"] <= a["line"] < c["line"] and not a["op"]
                     and re.search(rf"\b{re.escape(a['target'])}\b", text)]
            if local:
                a = local[-1]
                ok, v, ev = self._resolver.eval(a["expr"])
                if ok and isinstance(v, int) and not isinstance(v, bool) and v > 0:
                    return v, [f"{rel}:{a['line']}", f"{rel}:{c['line']}", *ev]
        return None
