"""Tensor/pipeline/expert/context/data parallel degrees."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.launch import to_int
from schedmate.codeprof.params import (
    CODE_DEFAULT,
)
from schedmate.codeprof.static.names import (
    CP,
    EP,
    PP,
    TP,
)

# Colossal-AI's config convention (also InternLM/InternEvo): `parallel = dict(pipeline=2, tensor=dict(size=4,
# mode="1d"))`, a degree or a dict with its size; every tensor mode (1d/2d/2.5d/3d, and InternEvo's
# sequence-parallel msp/fsp/isp) takes `size` GPUs out of the data-parallel width.
NESTED_TP = ("parallel.tensor.size", "parallel.tensor")
NESTED_PP = ("parallel.pipeline.size", "parallel.pipeline")


class ParallelMixin:
    """Tensor/pipeline/expert/context/data parallel degrees."""

    def _parallelism(self) -> None:
        r, P, L = self.r, self.r.params, self.r.launch
        assert L is not None
        for fname, names in (
            ("parallelism.tensor", TP + NESTED_TP),
            ("parallelism.pipeline", PP + NESTED_PP),
            ("parallelism.expert", EP),
            ("parallelism.context", CP),
        ):
            got = self._first(names, min_layer=CODE_DEFAULT)
            if got is not None and to_int(got[0]) is not None and to_int(got[0]) > 0:  # type: ignore[operator]
                r.put(fname, to_int(got[0]), got[1])
        ng = r.val("num_gpus")
        # data-parallel mode
        strategy = self.lightning.get("strategy")
        sv = str(strategy[0]).lower() if strategy else ""
        dist_type = L.get("distributed_type")
        zero = None
        if self._ds is not None:
            st = self._ds_value("zero_optimization.stage")
            zero = st if st is not None else (0, [self._ds["path"]])
        elif "deepspeed_stage" in sv:
            m = re.search(r"stage_(\d)", sv)
            zero = (int(m.group(1)) if m else 0, strategy[1]) if strategy else None
        elif dist_type == "DEEPSPEED":
            zs = L.settings.get("zero_stage")
            zero = (zs.value, zs.where) if zs else None
        if zero is not None and to_int(zero[0]) is not None:
            stage = to_int(zero[0])
            if stage and stage > 0:
                r.put("parallelism.data", "zero", zero[1])
                r.put("parallelism.zero_stage", stage, zero[1])
            elif ng != 1:
                r.put(
                    "parallelism.data", "ddp", zero[1], note="DeepSpeed ZeRO stage 0 is plain data parallel"
                )
            return self._dp_none_if_single(ng)
        fsdp_ev: list[str] = []
        if sv.startswith("fsdp") or "fsdp" in sv:
            fsdp_ev = strategy[1]  # type: ignore[index]
        if dist_type == "FSDP":
            fsdp_ev = L.settings["distributed_type"].where
        pv = P.get("fsdp")
        if pv is not None and isinstance(pv.value, str) and pv.value.strip() and pv.layer >= CODE_DEFAULT:
            fsdp_ev = pv.where
        shard = P.get_path("parallelism.data_parallel_shard_degree")
        if shard is not None and to_int(shard.value) not in (None, 1, 0):
            fsdp_ev = shard.where
        for rel, c in self._find_calls("FSDP", "FullyShardedDataParallel", "fully_shard"):
            fsdp_ev = [f"{rel}:{c['line']}"]
        if fsdp_ev:
            r.put("parallelism.data", "fsdp", fsdp_ev)
            return self._dp_none_if_single(ng)
        ddp_ev: list[str] = []
        for rel, c in self._find_calls(
            "DistributedDataParallel",
            "DDP",
            "DistributedOptimizer",
            "MirroredStrategy",
            "MultiWorkerMirroredStrategy",
            "pmap",
        ):
            ddp_ev.append(f"{rel}:{c['line']}")
        for rel, c in self.calls:
            if any(a in {"jax.pmap", "pmap"} for a in c["args"]):
                ddp_ev.append(f"{rel}:{c['line']}")
        if sv.startswith("ddp"):
            ddp_ev = strategy[1]  # type: ignore[index]
        if dist_type == "MULTI_GPU":
            ddp_ev = L.settings["distributed_type"].where
        tp = r.val("parallelism.tensor") or 1
        pp = r.val("parallelism.pipeline") or 1
        cp = r.val("parallelism.context") or 1
        dp = ng // (tp * pp * cp) if ng and ng % (tp * pp * cp) == 0 else None
        if ng is not None and (ng <= 1 or dp == 1):
            r.put(
                "parallelism.data",
                "none",
                self.r.facts["num_gpus"].evidence,
                note="a single data-parallel replica",
            )
            return
        if ddp_ev:
            r.put("parallelism.data", "ddp", ddp_ev[:3])
        elif dp and dp > 1 and r.val("framework") in {"hf-trainer", "megatron", "lightning", "accelerate"}:
            r.put(
                "parallelism.data",
                "ddp",
                self.r.facts["num_gpus"].evidence,
                note=f"{r.val('framework')} runs data parallel over {dp} replicas by default",
            )

    def _disabled(self, c: dict[str, Any]) -> bool:
        if self._active(c) is False:
            return True
        if "enabled" in c["kwargs"]:
            ok, v, _ = self._resolver.eval(c["kwargs"]["enabled"])
            return bool(ok and not v)
        return False

    def _dp_none_if_single(self, ng: int | None) -> None:
        if ng is not None and ng <= 1 and self.r.val("parallelism.data") in {"ddp", "fsdp"}:
            ev = self.r.facts["num_gpus"].evidence
            self.r.put("parallelism.data", "none", ev, note="a single GPU: nothing to replicate or shard")
