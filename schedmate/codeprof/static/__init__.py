"""The static pass: exact facts from the command line, the entry script's AST and its config files.

Nothing is executed. Precedence of values: library defaults < code defaults (argparse, dataclasses,
module globals) < config files < config files named on the command line < command-line overrides <
values fixed in code at run time (`TrainingArguments(...)`, `Trainer(...)`, `x //= world_size`).
Every fact carries evidence `file:line` (or `cmd`). A field the sources do not fix stays absent.

One module per seam: `names` (data tables), `result`, `reading` (entry script, defaults, command line),
`config_files` (config files, Hydra, group overrides), `libraries` (conventions of libraries), `runtime`
(values fixed in code, topology), `model`, `batch` (batch, length, duration, precision), `parallel`.
"""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.derive import DEFAULT_VOCAB
from schedmate.codeprof.launch import parse_launch
from schedmate.codeprof.params import (
    CODE_DEFAULT,
)
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.static.batch import BatchMixin
from schedmate.codeprof.static.config_calls import read_config_calls
from schedmate.codeprof.static.config_object_batch import read_config_object_batches
from schedmate.codeprof.static.config_files import ConfigFilesMixin
from schedmate.codeprof.static.devices import DevicesMixin
from schedmate.codeprof.static.epoch_steps import EpochStepsMixin
from schedmate.codeprof.static.fit_calls import FitCallsMixin
from schedmate.codeprof.static.hparams_string import apply_hparams_strings
from schedmate.codeprof.static.libraries import Library
from schedmate.codeprof.static.model import ModelMixin
from schedmate.codeprof.static.names import (
    EXPERTS,
    FFN,
    HIDDEN,
    LAYERS,
    VOCAB,
)
from schedmate.codeprof.static.parallel import ParallelMixin
from schedmate.codeprof.static.called_defaults import read_called_defaults
from schedmate.codeprof.static.mesh_devices import put_mesh_devices
from schedmate.codeprof.static.null_accum import null_accumulation
from schedmate.codeprof.static.one_replica import mark_one_replica
from schedmate.codeprof.static.reading import ReadingMixin
from schedmate.codeprof.static.result import StaticResult
from schedmate.codeprof.static.runtime import RuntimeMixin

# a gradient-accumulation setting or call (`gradient_accumulation_steps`, `accum_iter`, `update_freq`,
# `accelerator.accumulate(model)`), not any word with "accum" in it (`coco_evaluator.accumulate()`), nor a
# running count (`accumulated_iter`: iterations done so far), nor another update's period
# (`actor_update_freq`, `target_update_frequency` in RL)
_FLOAT_VALUED = re.compile(r"^(?!.*\bint\().*(\d\.\d|\*\*)")
_ACCUM_NAME = re.compile(r"grad\w*accum|accum(?!ulated_)\w*(grad|step|iter|batch|freq)|(^|\.)update_freq$|"
                         r"^accelerator\.accumulate$|"
                         r"\baccum_?(steps|iter)?$|accumulate_grad", re.IGNORECASE)


class StaticPass(ReadingMixin, ConfigFilesMixin, RuntimeMixin, DevicesMixin, ModelMixin, BatchMixin, ParallelMixin,
                 FitCallsMixin, EpochStepsMixin):
    def __init__(
        self,
        wd: Workdir,
        command: str,
        env: dict[str, str] | None = None,
        launcher_config: str | None = None,
        py_cache: Any = None,
    ):
        self.wd = wd
        self.command = command
        self.env = dict(env or {})
        self.launcher_config = launcher_config
        self.r = StaticResult()
        self.py_cache = py_cache  # optional callable(rel, text) -> summary (the version cache)
        self.calls: list[tuple[str, dict[str, Any]]] = []  # (file, call)
        self.over_budget: list[str] = []  # the entry's local imports past the file budget (reading.py)
        self._hydra_overrides: dict[str, str] = {}  # group -> choice given on the command line
        self._positional: list[str] = []
        self._one_process_many_gpus: str | None = None  # file:line of a DataParallel over every visible GPU
        self._libraries: list[Library] = []  # libraries whose conventions apply (static/libraries.py)

    def run(self) -> StaticResult:
        r = self.r
        L = parse_launch(self.command, self.wd, self.env)
        r.launch = L
        r.notes.extend(L.notes)
        if self.launcher_config:
            self._launcher_config(self.launcher_config)
        r.entry = L.script
        if L.script:
            self._read_python(L.script, entry=True)
        elif L.module:
            r.notes.append(f"module {L.module} is not a file in the workdir; only the command line was read")
        self._defaults()
        read_called_defaults(self)  # called_defaults.py: `train(env)` runs with `def train(env, n_envs=8)`'s 8
        self._command_line_args()
        apply_hparams_strings(self.r.params)
        self._config_files()
        self._resolver = self._make_resolver()
        read_config_calls(self)  # config_calls.py: `get_config(FLAGS.epochs, ...)` bound to its parameters
        read_config_object_batches(self)  # config_object_batch.py: `DQNConfig(batch_size=32)` over a base default
        self._runtime_values()
        self._resolver = self._make_resolver()
        self._topology()
        self._resolver = self._make_resolver()
        self._framework()
        self._deepspeed_and_sharding()
        self._model()
        self._local_steps_per_epoch()
        self._batch_and_length()
        null_accumulation(self)  # null_accum.py: accumulation and global batch both None -> accumulation 1
        self._precision()
        self._parallelism()
        put_mesh_devices(self)  # mesh_devices.py: a fully stated GPU mesh is the device count
        mark_one_replica(self)  # one_replica.py: a plain process that replicates nothing is one replica
        self._dims_and_knobs()
        self._candidates()
        return r

    def _candidates(self) -> None:
        """Last step: the named numbers of what was read, for the fields a fact may still miss after
        derivation (decided in `analyzer.finish`, never over a fact)."""
        from schedmate.codeprof.candidates import collect

        try:
            self.r.candidates = collect(self.r, self.wd, self.command)
        except (ValueError, TypeError, KeyError, RecursionError) as e:
            self.r.notes.append(f"candidates: not collected ({type(e).__name__}: {e})")

    def _dims_and_knobs(self) -> None:
        r = self.r
        for key, names in (
            ("layers", LAYERS),
            ("hidden", HIDDEN),
            ("vocab", VOCAB),
            ("ffn", FFN),
            ("experts", EXPERTS),
            ("positions", ("max_position_embeddings", "n_positions", "block_size")),
        ):
            got = self._first(names, min_layer=CODE_DEFAULT)
            if got is not None and isinstance(got[0], int) and not isinstance(got[0], bool) and got[0] > 0:
                r.dims[key] = (got[0], list(got[1]))
        if "vocab" not in r.dims and "hidden" in r.dims:  # the vocabulary is the tokenizer's
            tok = self._first(("tokenizer_name_or_path", "tokenizer_name", "tokenizer_path", "tokenizer"),
                              min_layer=CODE_DEFAULT)
            vocab = DEFAULT_VOCAB.get(known.family_of(tok[0]) or "") if tok and isinstance(tok[0], str) else None
            if vocab:
                r.dims["vocab"] = (vocab, list(tok[1]))  # type: ignore[index]
        tie = self._first(("tie_word_embeddings", "tie_embeddings", "share_embeddings"), min_layer=CODE_DEFAULT)
        untie = self._first(("no_weight_tying", "untie_embeddings_and_output_weights"), min_layer=CODE_DEFAULT)
        if tie is not None and tie[0] is False:
            r.dims["untied"] = (1, list(tie[1]))
        elif untie is not None and untie[0] is True:
            r.dims["untied"] = (1, list(untie[1]))
        knob = any(_ACCUM_NAME.search(k) and not (isinstance(pv.value, float) and not pv.value.is_integer())
                   for k, pv in r.params.items())
        for s in r.py.values():
            knob = knob or any(
                _ACCUM_NAME.search(c["func"]) and not re.search(r"eval", c["func"], re.IGNORECASE)
                or any(_ACCUM_NAME.search(k) for k in c["kwargs"]) for c in s["calls"]
            )
            # (a float-valued `accum = 0.5 ** (32 / 10000)` is a moving-average decay, not a count of passes)
            knob = knob or any(_ACCUM_NAME.search(a["target"]) and not _FLOAT_VALUED.search(a["expr"])
                               for a in s["assigns"])
        r.accum_knob = bool(knob or self._ds is not None or (r.launch and r.launch.get("grad_accum")))


def run_static(
    wd: Workdir,
    command: str,
    env: dict[str, str] | None = None,
    launcher_config: str | None = None,
    py_cache: Any = None,
) -> StaticResult:
    return StaticPass(wd, command, env, launcher_config, py_cache).run()


__all__ = ["StaticPass", "StaticResult", "run_static"]
