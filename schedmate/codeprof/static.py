"""The static pass: exact facts from the command line, the entry script's AST and its config files.

Nothing is executed. Precedence of values: library defaults < code defaults (argparse, dataclasses,
module globals) < config files < config files named on the command line < command-line overrides <
values fixed in code at run time (`TrainingArguments(...)`, `Trainer(...)`, `x //= world_size`).
Every fact carries evidence `file:line` (or `cmd`). A field the sources do not fix stays absent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import known
from schedmate.codeprof.config_tree import load_tree
from schedmate.codeprof.configs import ConfigError, flatten, key_lines, parse_config
from schedmate.codeprof.facts import Fact
from schedmate.codeprof.launch import Launch, Setting, parse_launch, to_int
from schedmate.codeprof.params import (
    CODE_DEFAULT,
    COMMAND_LINE,
    CONFIG,
    CONFIG_OVERRIDE,
    LIBRARY_DEFAULT,
    RUNTIME,
    ParamSpace,
    norm,
)
from schedmate.codeprof.pyast import analyze_python
from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.resolve import Resolver

MICRO = (
    "micro_batch_size",
    "per_device_train_batch_size",
    "train_micro_batch_size_per_gpu",
    "micro_bsz",
    "local_batch_size",
    "batch_size_per_gpu",
    "per_gpu_batch_size",
    "per_gpu_train_batch_size",
    "batch_size_per_device",
    "per_device_batch_size",
    "batch_size_per_replica",
    "micro_batch",
    "train_batch_size",
    "mbs",
    "batch_size",
    "bs",
    "train.batch_size",
    "training.batch_size",
)
GLOBAL = ("global_batch_size", "total_batch_size", "global_bs", "effective_batch_size", "gbs", "ims_per_batch",
          "global_train_batch_size")
ACCUM = (
    "gradient_accumulation_steps",
    "grad_accum_steps",
    "accumulate_grad_batches",
    "grad_accum",
    "accum_steps",
    "gradient_accumulation",
    "accumulation_steps",
    "grad_acc_steps",
    "accum_iter",
    "gradient_accumulation_iters",
)
SEQ = (
    "seq_len",
    "seq_length",
    "max_seq_length",
    "max_seq_len",
    "block_size",
    "sequence_length",
    "context_length",
    "max_length",
    "ctx_len",
    "encoder_seq_length",
    "max_source_length",
    "n_ctx",
    "max_position_embeddings",
)
EPOCHS = (
    "epochs",
    "num_epochs",
    "num_train_epochs",
    "max_epochs",
    "n_epochs",
    "train_epochs",
    "total_epochs",
)
STEPS = (
    "max_steps",
    "train_steps",
    "max_iters",
    "train_iters",
    "total_steps",
    "num_train_steps",
    "training.steps",
    "max_iterations",
    "total_iters",
    "num_iterations",
    "num_updates",
    "num_training_steps",
    "max_train_steps",
    "max_iter",
    "total_training_steps",
    "num_train_steps",
    "training_steps",
    "num_steps",
)
# names computed inside functions that the static pass evaluates (`steps = tokens // (bs * seq * world)`)
COMPUTED_STEPS = STEPS + ("steps", "n_iters", "iterations")
TP = (
    "tensor_model_parallel_size",
    "tensor_parallel_degree",
    "tensor_parallel_size",
    "tp_size",
    "tp_degree",
    "tp",
)
PP = (
    "pipeline_model_parallel_size",
    "pipeline_parallel_degree",
    "pipeline_parallel_size",
    "pp_size",
    "pp_degree",
    "pp",
)
EP = ("expert_model_parallel_size", "expert_parallel_degree", "expert_parallel_size", "ep_size", "ep")
CP = ("context_parallel_size", "context_parallel_degree", "cp_size", "cp")
LAYERS = ("num_layers", "n_layer", "n_layers", "num_hidden_layers", "layers", "depth", "nlayers", "num_layer")
HIDDEN = ("hidden_size", "n_embd", "d_model", "dim", "embed_dim", "hidden_dim", "emb_dim", "n_embed", "width")
VOCAB = ("vocab_size", "padded_vocab_size", "n_vocab", "ntokens", "num_tokens")
FFN = ("ffn_hidden_size", "intermediate_size", "ffn_dim", "d_ff", "dim_feedforward", "mlp_dim")
EXPERTS = ("num_experts", "num_local_experts", "n_experts", "moe_num_experts")
MODEL_NAME = (
    "model_name_or_path",
    "init_from",
    "pretrained_model_name_or_path",
    "model_name",
    "model_id",
    "arch",
    "architecture",
    "model_type",
    "model.name",
    "model",
    "base_model",
    "network",
    "net",
    "backbone",
)
HF_DEFAULTS = {
    "per_device_train_batch_size": 8,
    "gradient_accumulation_steps": 1,
    "num_train_epochs": 3,
    "max_steps": -1,
    "fp16": False,
    "bf16": False,
}
LIGHTNING_KW = {
    "devices",
    "gpus",
    "num_nodes",
    "strategy",
    "precision",
    "max_epochs",
    "max_steps",
    "accumulate_grad_batches",
    "accelerator",
}
_FLAG_WORDS = re.compile(r"^(true|false|yes|no|none|null)$", re.IGNORECASE)


def parse_scalar(s: str) -> Any:
    t = s.strip()
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    if re.fullmatch(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?", t):
        return float(t)
    if _FLAG_WORDS.match(t):
        return {"true": True, "yes": True, "false": False, "no": False}.get(t.lower())
    return t.strip("\"'")


@dataclass
class StaticResult:
    facts: dict[str, Fact] = field(default_factory=dict)
    launch: Launch | None = None
    params: ParamSpace = field(default_factory=ParamSpace)
    py: dict[str, dict[str, Any]] = field(default_factory=dict)
    configs: list[str] = field(default_factory=list)
    entry: str | None = None
    framework_signals: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    dims: dict[str, tuple[Any, list[str]]] = field(default_factory=dict)
    accum_knob: bool = True

    def put(
        self, name: str, value: Any, where: list[str] | str, note: str | None = None, source: str = "static"
    ) -> None:
        if value is None:
            return
        w = [where] if isinstance(where, str) else list(where)
        self.facts[name] = Fact(value=value, source=source, evidence=_dedup(w), note=note)  # type: ignore[arg-type]

    def val(self, name: str) -> Any:
        f = self.facts.get(name)
        return None if f is None else f.value


def _dedup(xs: list[str]) -> list[str]:
    out: list[str] = []
    for x in xs:
        if x and x not in out:
            out.append(x)
    return out


class StaticPass:
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
        self._hydra_overrides: dict[str, str] = {}  # group -> choice given on the command line
        self._positional: list[str] = []

    # ------------------------------------------------------------------ driver
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
        self._command_line_args()
        self._config_files()
        self._resolver = self._make_resolver()
        self._runtime_values()
        self._resolver = self._make_resolver()
        self._topology()
        self._resolver = self._make_resolver()
        self._framework()
        self._deepspeed_and_sharding()
        self._model()
        self._batch_and_length()
        self._precision()
        self._parallelism()
        self._dims_and_knobs()
        return r

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
        knob = any("accum" in k for k, _ in r.params.items())
        for s in r.py.values():
            knob = knob or any(
                "accum" in c["func"] or any("accum" in k for k in c["kwargs"]) for c in s["calls"]
            )
            knob = knob or any("accum" in a["target"] for a in s["assigns"])
        r.accum_knob = bool(knob or self._ds is not None or (r.launch and r.launch.get("grad_accum")))

    # ------------------------------------------------------------------ reading
    def _read_python(self, rel: str, entry: bool = False) -> None:
        if rel in self.r.py:
            return
        text = self.wd.read_text(rel)
        if text is None:
            why = self.wd.skipped.get(rel, "missing")
            self.r.notes.append(f"{rel}: not read ({why})")
            return
        try:
            summary = self.py_cache(rel, text) if self.py_cache else analyze_python(text)
        except SyntaxError as e:
            self.r.notes.append(f"{rel}:{e.lineno}: Python syntax error, file skipped: {e.msg}")
            return
        self.r.py[rel] = summary
        self.calls.extend((rel, c) for c in summary["calls"])
        if entry:
            # local modules the entry imports (one level): model definitions, config dataclasses
            base = str(PurePosixPath(rel).parent)
            for imp in summary["imports"]:
                parts = imp.split(".")
                for k in range(len(parts), 0, -1):
                    for root in (base, self.r.launch.base if self.r.launch else "", ""):
                        cand = self.wd.rel("/".join(parts[:k]) + ".py", root)
                        if cand and cand != rel and self.wd.exists(cand) and len(self.r.py) < 12:
                            self._read_python(cand)
                            break
                    else:
                        continue
                    break

    def _launcher_config(self, path: str) -> None:
        rel = self.wd.rel(path)
        text = self.wd.read_text(rel) if rel else None
        if text is None:
            self.r.notes.append(f"launcher config {path} not readable in the workdir")
            return
        try:
            cfg = parse_config(rel, text)  # type: ignore[arg-type]
        except ConfigError as e:
            self.r.notes.append(str(e))
            return
        L = self.r.launch
        assert L is not None
        if "distributed_type" in cfg or "num_processes" in cfg:
            from schedmate.codeprof.launch.accelerate import accelerate_config
            from schedmate.codeprof.launch.context import Ctx
            from schedmate.codeprof.launch.model import combine

            accelerate_config(Ctx(self.wd, L), rel, rel)  # type: ignore[arg-type]
            combine(L)
        elif "zero_optimization" in cfg or "train_micro_batch_size_per_gpu" in cfg:
            L.put("ds_config", rel, rel)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ parameter space
    def _uses_hf_args(self) -> bool:
        for s in self.r.py.values():
            if any(
                c.split(".")[-1] in {"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"}
                for c in s["hf_parser"]
            ):
                return True
        return False

    def _defaults(self) -> None:
        P = self.r.params
        if self._uses_hf_args():
            for k, v in HF_DEFAULTS.items():
                P.set(k, v, "transformers.TrainingArguments default", LIBRARY_DEFAULT)
        for rel, s in self.r.py.items():
            for a in s["argparse"]:
                if a["has_default"]:
                    P.set(a["dest"], a["default"], f"{rel}:{a['line']}", CODE_DEFAULT)
            wanted = {c.split(".")[-1] for c in s["hf_parser"]}
            for cname, fields in s["dataclasses"].items():
                if cname in wanted or re.search(r"(Config|Args|Arguments|Hparams|HParams|Settings)$", cname):
                    for f in fields:
                        if f["has_default"]:
                            P.set(f["name"], f["default"], f"{rel}:{f['line']}", CODE_DEFAULT)
            if rel == self.r.entry:  # nanoGPT-style module globals of the entry script
                import ast as _ast

                from schedmate.codeprof.pyast import const_eval

                known_globals: dict[str, Any] = {}
                for a in s["assigns"]:
                    if a["depth"] != 0 or a["op"] is not None or "." in a["target"] or a.get("when"):
                        continue
                    try:
                        ok, v = const_eval(_ast.parse(a["expr"], mode="eval").body, known_globals)
                    except SyntaxError:
                        continue
                    if ok and isinstance(v, (int, float, str, bool)):
                        known_globals[a["target"]] = v
                        P.set(a["target"], v, f"{rel}:{a['line']}", CODE_DEFAULT)
                    elif ok and isinstance(v, dict) and v and all(isinstance(k, str) for k in v):
                        for k, x in flatten(v, a["target"]):  # CFG = {"epochs": 50} -> cfg.epochs
                            if isinstance(x, (int, float, str, bool)):
                                P.set(k, x, f"{rel}:{a['line']}", CODE_DEFAULT)

    def _flag_dest(self) -> dict[str, tuple[str, Any]]:
        """flag spelling -> (dest, action)."""
        out: dict[str, tuple[str, Any]] = {}
        for s in self.r.py.values():
            for a in s["argparse"]:
                for f in a["flags"]:
                    out[f] = (a["dest"], a["action"])
        return out

    def _command_line_args(self) -> None:
        L = self.r.launch
        assert L is not None
        P = self.r.params
        flags = self._flag_dest()
        where = L.args_where
        args = L.args
        positional: list[str] = []
        i = 0
        while i < len(args):
            t = args[i]
            if t.startswith("-") and len(t) > 1 and not re.fullmatch(r"-\d+(\.\d*)?", t):
                name, eq, val = t.partition("=")
                dest, action = flags.get(name, (norm(name), None))
                if eq:
                    P.set(dest, parse_scalar(val), where, COMMAND_LINE)
                    i += 1
                elif action in {"store_true", "store_false"}:
                    P.set(dest, action == "store_true", where, COMMAND_LINE)
                    i += 1
                elif i + 1 < len(args) and (
                    not args[i + 1].startswith("-") or re.fullmatch(r"-\d+(\.\d*)?", args[i + 1])
                ):
                    vals = [args[i + 1]]
                    j = i + 2
                    while (
                        j < len(args)
                        and not args[j].startswith("-")
                        and "=" not in args[j]
                        and action == "nargs"
                    ):
                        vals.append(args[j])
                        j += 1
                    P.set(dest, parse_scalar(vals[0]), where, COMMAND_LINE)
                    i = j
                else:
                    P.set(dest, True, where, COMMAND_LINE)
                    i += 1
            elif re.match(r"^\+{0,2}[A-Za-z_][\w.]*=", t):  # Hydra / key=value override
                k, _, v = t.lstrip("+").partition("=")
                P.set(k, parse_scalar(v), where, COMMAND_LINE)
                self._hydra_overrides[k] = v
                i += 1
            else:
                positional.append(t)
                i += 1
        self._positional = positional

    def _config_paths(self) -> list[tuple[str, str, int]]:
        """(workdir-relative path, evidence, layer) of the config files the job uses."""
        P = self.r.params
        L = self.r.launch
        assert L is not None
        out: list[tuple[str, str, int]] = []
        base = str(PurePosixPath(self.r.entry).parent) if self.r.entry else L.base

        def add(path: Any, where: str, layer: int) -> None:
            if not isinstance(path, str) or not path.lower().endswith(
                (".yaml", ".yml", ".json", ".toml", ".py")
            ):
                return
            for root in (L.base, base, ""):
                rel = self.wd.rel(path, root)
                if rel and self.wd.exists(rel):
                    if rel not in [o[0] for o in out] and rel != self.r.entry and rel not in self.r.py:
                        out.append((rel, where, layer))
                    return
            self.r.notes.append(f"config {path} named at {where} is not in the workdir")

        for key, pv in P.items():
            leaf = key.rsplit(".", 1)[-1]
            if re.search(
                r"(^|_)(config|cfg|config_file|config_path|conf|yaml|hparams_file)$", leaf
            ) and not re.search(r"deepspeed|ds_config", leaf):
                add(pv.value, pv.where[0], CONFIG if pv.layer < COMMAND_LINE else CONFIG_OVERRIDE)
        for p in self._positional:
            add(p, L.args_where[0], CONFIG_OVERRIDE)
        for rel, c in self.calls:
            tail = c["func"].rsplit(".", 1)[-1]
            if tail in {
                "open",
                "load",
                "safe_load",
                "from_json_file",
                "from_yaml",
                "Path",
                "load_config",
                "from_file",
                "read_text",
            }:
                for a in c["args"][:1]:
                    m = re.fullmatch(r"""['"]([^'"]+\.(?:ya?ml|json|toml))['"]""", a)
                    if m:
                        add(m.group(1), f"{rel}:{c['line']}", CONFIG)
        return out

    def _config_files(self) -> None:
        self._hydra()
        for rel, _where, layer in self._config_paths():
            self._load_config(rel, layer, prefix="")

    def _load_config(self, rel: str, layer: int, prefix: str = "") -> dict[str, Any] | None:
        text = self.wd.read_text(rel)
        if text is None:
            self.r.notes.append(f"config {rel} not read ({self.wd.skipped.get(rel, 'missing')})")
            return None
        tree = load_tree(self.wd.read_text, rel, self.r.launch.env if self.r.launch else {})
        self.r.notes.extend(n for n in tree.notes if n not in self.r.notes)
        if rel not in tree.files:
            return None
        cfg = tree.data
        for f in tree.files:
            if f not in self.r.configs:
                self.r.configs.append(f)
        if "zero_optimization" in cfg or "train_micro_batch_size_per_gpu" in cfg:
            self._ds_cfg = (rel, cfg, text)
            return cfg
        flat = flatten(cfg)
        wheres = tree.where
        leaf_vals: dict[str, set[str]] = {}
        for k, v in flat:
            leaf_vals.setdefault(k.rsplit(".", 1)[-1], set()).add(repr(v))
        for k, v in flat:
            if k == "defaults" or isinstance(v, list) and k.endswith("defaults"):
                continue
            key = f"{prefix}.{k}" if prefix else k
            cur = self.r.params.get(key) if "." in key else self.r.params._full.get(norm(key))
            if cur is not None and cur.layer >= COMMAND_LINE:
                continue
            self.r.params.set(
                key, v, wheres.get(k, f"{rel}:1"), layer, leaf=len(leaf_vals[k.rsplit(".", 1)[-1]]) == 1
            )
        return cfg

    def _hydra(self) -> None:
        self._ds_cfg: tuple[str, dict[str, Any], str] | None = None
        for rel, c in self.calls:
            if not c["func"].endswith("hydra.main") and c["func"] != "main":
                continue
            if "config_name" not in c["kwargs"]:
                continue
            cp = c["kwargs"].get("config_path", "'.'").strip("'\"")
            cn = c["kwargs"]["config_name"].strip("'\"")
            base = str(PurePosixPath(rel).parent)
            root = self.wd.rel(cp, base) or ""
            main = self.wd.rel(f"{cn}.yaml", root)
            if not main or not self.wd.exists(main):
                self.r.notes.append(f"hydra config {cp}/{cn}.yaml named at {rel}:{c['line']} not found")
                return
            text = self.wd.read_text(main) or ""
            try:
                cfg = parse_config(main, text)
            except ConfigError as e:
                self.r.notes.append(str(e))
                return
            for d in cfg.get("defaults", []) or []:
                if isinstance(d, dict):
                    for group, choice in d.items():
                        group = str(group).lstrip("+/").split("@")[0]
                        choice = self._hydra_overrides.get(group, choice)
                        sub = self.wd.rel(f"{group}/{choice}.yaml", root)
                        if sub and self.wd.exists(sub):
                            self._load_config(sub, CONFIG, prefix=group.replace("/", "."))
                            self.r.params.set(
                                group,
                                choice,
                                f"{main}:{key_lines(text, [group]).get(group, 1)}"
                                if group not in self._hydra_overrides
                                else self.r.launch.args_where,
                                CONFIG,
                            )
            self._load_config(main, CONFIG)
            return

    # ------------------------------------------------------------------ run-time values in code
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
        if L.get("single_process"):
            world = world or 1
        assigns: dict[str, list[dict[str, Any]]] = {}
        entry = self.r.py.get(self.r.entry or "", {})
        for a in entry.get("assigns", []):
            assigns.setdefault(a["target"], []).append(a)
        return Resolver(self.r.params, env, world, local, assigns, self.r.entry or "")

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
        for rel, c in self._find_calls("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"):
            for k, src in c["kwargs"].items():
                ok, v, ev = R.eval(src)
                if ok:
                    P.set(k, v, [f"{rel}:{c['line']}", *ev], RUNTIME)
        if self._imports_any("lightning", "pytorch_lightning"):
            for rel, c in self._find_calls("Trainer"):
                for k, src in c["kwargs"].items():
                    if k in LIGHTNING_KW:
                        ok, v, ev = R.eval(src)
                        if ok:
                            self.lightning[k] = (v, [f"{rel}:{c['line']}", *ev])
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
            if (
                (re.search(r"(Config|Args|ModelArgs)$", tail) or tail == "dict")
                and tail not in {"TrainingArguments", "SFTConfig"}
                and self._active(c) is not False
            ):
                for k, src in c["kwargs"].items():
                    if k in LAYERS + HIDDEN + VOCAB + FFN + EXPERTS:
                        ok, v, ev = R.eval(src)
                        if ok and isinstance(v, int) and not isinstance(v, bool):
                            dims.setdefault(k, []).append((v, [f"{rel}:{c['line']}", *ev]))
        for k, vals in dims.items():
            if len({v for v, _ in vals}) == 1:
                P.set(k, vals[0][0], vals[0][1], RUNTIME)
        # durations computed in code: `args.num_iterations = args.total_timesteps // args.batch_size`
        entry_assigns = self.r.py.get(self.r.entry or "", {}).get("assigns", [])
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
                ok, v, ev = R.eval(a["expr"])
                if ok and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
                    P.set(
                        "train_steps" if leaf in {"steps", "n_iters", "iterations"} else leaf,
                        int(v),
                        [f"{self.r.entry}:{a['line']}", *ev],
                        RUNTIME,
                    )
        # in-place updates of known values (nanoGPT: gradient_accumulation_steps //= ddp_world_size)
        entry = self.r.py.get(self.r.entry or "", {})
        for a in entry.get("assigns", []):
            if a["op"] and a["depth"] == 0 and "." not in a["target"]:
                cur = P.get(a["target"])
                if cur is None or (a.get("when") and R.truth(a["when"]) is False):
                    continue
                ok, v, ev = R.eval(f"({cur.value!r}) {a['op']} ({a['expr']})")
                if ok and isinstance(v, (int, float)):
                    if a["op"] == "//" or isinstance(cur.value, int) and float(v).is_integer():
                        v = int(v)
                    P.set(a["target"], v, [*cur.where, f"{self.r.entry}:{a['line']}", *ev], RUNTIME)

    def _imports_any(self, *mods: str) -> list[str]:
        hits = []
        for rel, s in self.r.py.items():
            for imp in s["imports"]:
                if imp.split(".")[0] in mods or imp in mods:
                    hits.append(rel)
                    break
        return hits

    # ------------------------------------------------------------------ topology
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
        if self.r.py:
            return False, [f"{self.r.entry}:1"]
        return None, []

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
                v, ev = lt.get("devices", lt.get("gpus"))  # type: ignore[misc]
                n = (
                    v
                    if isinstance(v, int) and not isinstance(v, bool)
                    else (len(v) if isinstance(v, list) else None)
                )
                if n is not None and n > 0:
                    ppn = Setting(n, ev)
                    nprocs = None
                elif v in (-1, "auto", "-1"):
                    ppn, nprocs = None, None
            if "num_nodes" in lt:
                v, ev = lt["num_nodes"]
                if isinstance(v, int):
                    nodes = Setting(v, ev)
            for rel, c in self._find_calls("spawn", "start_processes"):
                if c["func"].split(".")[0] in {"mp", "torch", "multiprocessing"} and "nprocs" in c["kwargs"]:
                    ok, v, ev = self._resolver.eval(c["kwargs"]["nprocs"])
                    nprocs = None
                    if ok and isinstance(v, int):
                        ppn = Setting(v, [f"{rel}:{c['line']}", *ev])
                    else:
                        ppn = None
            tf_or_jax = self._imports_any("tensorflow", "jax")
            if tf_or_jax and uses_gpu and self._mirrored():
                ppn = None  # one process drives every visible GPU
                cvd = L.env.get("CUDA_VISIBLE_DEVICES")
                nprocs = None
                if cvd:
                    ppn = Setting(len([d for d in cvd.split(",") if d.strip()]), ["env:CUDA_VISIBLE_DEVICES"])
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

    # ------------------------------------------------------------------ framework
    def _framework(self) -> None:
        r = self.r
        sig: dict[str, list[str]] = {}

        def hit(name: str, where: list[str] | str) -> None:
            sig.setdefault(name, []).extend([where] if isinstance(where, str) else where)

        L = r.launch
        assert L is not None
        megatron_flags = [
            k
            for k, _ in r.params.items()
            if k in {"tensor_model_parallel_size", "pipeline_model_parallel_size", "micro_batch_size"}
        ]
        for rel in self._imports_any("megatron"):
            hit("megatron", f"{rel}:1")
        if (
            megatron_flags
            and any(pv.layer == COMMAND_LINE for k, pv in r.params.items() if k in megatron_flags)
            and r.params.get("global_batch_size") is not None
        ):
            hit("megatron", L.args_where)
        for rel, c in self._find_calls("initialize"):
            if c["func"].startswith("deepspeed"):
                hit("deepspeed", f"{rel}:{c['line']}")
        trainer_calls = self._find_calls("Trainer", "Seq2SeqTrainer", "SFTTrainer")
        hf_mod = self._imports_any("transformers", "trl")
        pl_mod = self._imports_any("lightning", "pytorch_lightning")
        for rel, c in trainer_calls:
            if pl_mod and (
                c["func"].startswith(("pl.", "L.", "lightning", "pytorch_lightning"))
                or not hf_mod
                or rel in pl_mod
                and rel not in hf_mod
            ):
                hit("lightning", f"{rel}:{c['line']}")
            elif hf_mod:
                hit("hf-trainer", f"{rel}:{c['line']}")
        for rel, c in self._find_calls("Accelerator"):
            hit("accelerate", f"{rel}:{c['line']}")
        for rel in self._imports_any("jax", "flax"):
            hit("jax", f"{rel}:1")
        for rel in self._imports_any("tensorflow", "keras"):
            hit("tensorflow", f"{rel}:1")
        for rel in self._imports_any("torch"):
            hit("pytorch", f"{rel}:1")
        r.framework_signals = sig
        for fw in (
            "megatron",
            "hf-trainer",
            "lightning",
            "deepspeed",
            "accelerate",
            "jax",
            "tensorflow",
            "pytorch",
        ):
            if fw in sig:
                r.put("framework", fw, sig[fw][:3])
                return

    # ------------------------------------------------------------------ sharding
    def _deepspeed_and_sharding(self) -> None:
        r, P, L = self.r, self.r.params, self.r.launch
        assert L is not None
        self._ds: dict[str, Any] | None = None
        ds_path: tuple[Any, list[str]] | None = None
        for k in ("deepspeed", "deepspeed_config", "ds_config", "deepspeed_config_file"):
            pv = P.get(k)
            if pv is not None and isinstance(pv.value, str) and pv.value.endswith(".json"):
                ds_path = (pv.value, pv.where)
                break
        if ds_path is None and L.get("ds_config"):
            ds_path = (L.get("ds_config"), L.settings["ds_config"].where)
        if ds_path is None:
            for rel, c in self._find_calls("initialize"):
                if c["func"].startswith("deepspeed"):
                    for key in ("config", "config_params"):
                        if key in c["kwargs"]:
                            ok, v, ev = self._resolver.eval(c["kwargs"][key])
                            if ok and isinstance(v, str):
                                ds_path = (v, [f"{rel}:{c['line']}", *ev])
                            elif ok and isinstance(v, dict) and v:  # the config is a dict in the code
                                line = next((e for e in ev if e.startswith(rel + ":")), f"{rel}:{c['line']}")
                                self._ds = {
                                    "path": line.rsplit(":", 1)[0],
                                    "cfg": v,
                                    "lines": {},
                                    "where": [f"{rel}:{c['line']}", *ev],
                                    "ev": line,
                                }
                                return
        if ds_path is None and self._ds_cfg is not None:
            ds_path = (self._ds_cfg[0], [self._ds_cfg[0]])
        if ds_path is not None:
            path, where = ds_path
            base = str(PurePosixPath(r.entry).parent) if r.entry else ""
            rel = None
            for root in (L.base, base, ""):
                cand = self.wd.rel(path, root)
                if cand and self.wd.exists(cand):
                    rel = cand
                    break
            text = self.wd.read_text(rel) if rel else None
            if text is None:
                r.notes.append(f"DeepSpeed config {path} ({where[0]}) not readable")
            else:
                try:
                    cfg = parse_config(rel, text)  # type: ignore[arg-type]
                    if rel not in r.configs:
                        r.configs.append(rel)  # type: ignore[arg-type]
                    self._ds = {
                        "path": rel,
                        "cfg": cfg,
                        "lines": key_lines(
                            text,
                            [
                                "zero_optimization.stage",
                                "train_micro_batch_size_per_gpu",
                                "train_batch_size",
                                "gradient_accumulation_steps",
                                "fp16.enabled",
                                "bf16.enabled",
                                "bfloat16.enabled",
                            ],
                        ),
                        "where": where,
                    }
                except ConfigError as e:
                    r.notes.append(str(e))

    def _ds_value(self, key: str) -> tuple[Any, list[str]] | None:
        if not self._ds:
            return None
        cur: Any = self._ds["cfg"]
        for part in key.split("."):
            if not isinstance(cur, dict) or part not in cur:
                return None
            cur = cur[part]
        if cur == "auto":
            return None
        line = self._ds["lines"].get(key)
        if "ev" in self._ds:
            return cur, [self._ds["ev"]]
        return cur, [f"{self._ds['path']}:{line}" if line else self._ds["path"]]

    # ------------------------------------------------------------------ model
    def _model(self) -> None:
        r, P = self.r, self.r.params
        R = self._resolver
        name: tuple[str, list[str]] | None = None
        # torchtitan: [model] name + flavor
        mn, fl = P.get_path("model.name"), P.get_path("model.flavor")
        if mn is not None and fl is not None and isinstance(mn.value, str) and "." in mn.key:
            name = (f"{mn.value}-{fl.value}".lower(), mn.where + fl.where)
        for rel, c in self._find_calls("from_pretrained", "create_model", "from_config"):
            if name:
                break
            if c["args"] and not re.search(r"tokenizer|Tokenizer|processor|Processor", c["func"]):
                ok, v, ev = R.eval(c["args"][0])
                if ok and isinstance(v, str) and not v.startswith(("/", ".")):
                    name = (v, [f"{rel}:{c['line']}", *ev])
        if name is None:
            for rel, c in self.calls:
                tail = c["func"].rsplit(".", 1)[-1]
                if known.lookup_model(tail) and (
                    c["func"].startswith(
                        (
                            "models.",
                            "torchvision",
                            "tv.",
                            "timm",
                            "tf.keras.applications",
                            "keras.applications",
                            "applications.",
                        )
                    )
                    or c["func"] == tail
                ):
                    if self._active(c) is not False:
                        name = (tail, [f"{rel}:{c['line']}"])
                        break
        if name is None:
            for rel, c in self._find_calls("getattr"):
                if len(c["args"]) >= 2 and c["args"][0] in {"models", "torchvision.models", "tv.models"}:
                    ok, v, ev = R.eval(c["args"][1])
                    if ok and isinstance(v, str):
                        name = (v, [f"{rel}:{c['line']}", *ev])
        if name is None:
            for k in MODEL_NAME:
                pv = P.get(k)
                if (
                    pv is not None
                    and isinstance(pv.value, str)
                    and (known.lookup_model(pv.value) or known.family_of(pv.value))
                ):
                    name = (pv.value, pv.where)
                    break
        if name is not None:
            hit = known.lookup_model(name[0])
            r.put("model_name", hit[0] if hit else known.normalise_name(name[0]), name[1])
            fam = known.family_of(name[0])
            if fam:
                r.put("model_family", fam, name[1])
        if r.val("model_family") is None:
            fam = self._family_from_code()
            if fam:
                r.put("model_family", fam[0], fam[1])

    def _family_from_code(self) -> tuple[str, list[str]] | None:
        """Model classes the job defines (`class GPT(nn.Module)`), or Megatron's pretrain_<family>.py."""
        for rel, s in self.r.py.items():
            names = {c["name"] for c in s["classes"]}
            if any(n.endswith("Generator") for n in names) and any(
                n.endswith("Discriminator") for n in names
            ):
                c = next(c for c in s["classes"] if c["name"].endswith("Discriminator"))
                return "gan", [f"{rel}:{c['line']}"]
        for rel, s in self.r.py.items():
            for c in s["classes"]:
                if any(
                    b.endswith(("Module", "LightningModule", "Model", "PreTrainedModel", "keras.Model"))
                    for b in c["bases"]
                ):
                    fam = known.family_of(c["name"])
                    if fam:
                        return fam, [f"{rel}:{c['line']}"]
        for rel, c in self.calls:  # library model classes: BertForMaskedLM(config), UNet2DModel(...)
            tail = c["func"].rsplit(".", 1)[-1]
            if re.match(r"^[A-Z]\w*(Model|LMHeadModel|For[A-Z]\w+)$", tail) and self._active(c) is not False:
                fam = known.family_of(tail)
                if fam:
                    return fam, [f"{rel}:{c['line']}"]
        if self.r.entry:
            stem = PurePosixPath(self.r.entry).stem
            m = re.match(r"pretrain_(\w+)", stem)
            if m and known.family_of(m.group(1)):
                return known.family_of(m.group(1)), list(self.r.launch.args_where)  # type: ignore[union-attr,return-value]
        return None

    # ------------------------------------------------------------------ batch, length, duration
    def _first(
        self, names: tuple[str, ...], min_layer: int = LIBRARY_DEFAULT
    ) -> tuple[Any, list[str]] | None:
        for n in names:
            pv = self.r.params.get_path(n) if "." in n else self.r.params.get(n)
            if (
                pv is not None
                and pv.layer >= min_layer
                and pv.value is not None
                and not isinstance(pv.value, (dict, list))
            ):
                return pv.value, pv.where
        return None

    def _batch_and_length(self) -> None:
        r = self.r
        R = self._resolver
        fw = r.val("framework")
        # micro batch --------------------------------------------------------------------
        micro = None
        if self._ds_value("train_micro_batch_size_per_gpu"):
            micro = self._ds_value("train_micro_batch_size_per_gpu")
        if micro is None and fw in {"hf-trainer"}:
            micro = self._first(("per_device_train_batch_size",))
        if micro is None and fw == "megatron":
            micro = self._first(("micro_batch_size",))
        if micro is None:
            loaders = self._find_calls("DataLoader")
            loaders.sort(key=lambda rc: 0 if "train" in " ".join(rc[1]["args"][:1]) else 1)
            for rel, c in loaders:
                if "batch_size" in c["kwargs"]:
                    ok, v, ev = R.eval(c["kwargs"]["batch_size"])
                    if ok and isinstance(v, int) and not isinstance(v, bool):
                        micro = (v, [f"{rel}:{c['line']}", *ev])
                        break
        if micro is None and fw in {"tensorflow", "jax"}:
            per = self._first(
                (
                    "batch_size_per_replica",
                    "per_device_batch_size",
                    "batch_size_per_device",
                    "per_replica_batch_size",
                )
            )
            if per is not None:
                micro = per
            else:
                g = self._first(("global_batch_size", "batch_size"))
                if g is not None and self._world and isinstance(g[0], int) and g[0] % self._world == 0:
                    micro = (g[0] // self._world, g[1])
        if micro is None and fw not in {"tensorflow", "jax"}:
            micro = self._first(MICRO)
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
            accum = self._first(ACCUM)
        if accum is not None and to_int(accum[0]) is not None:
            r.put("grad_accum_steps", to_int(accum[0]), accum[1])
        gb = self._ds_value("train_batch_size") or self._first(GLOBAL)
        if gb is not None:
            r.put("global_batch_size", to_int(gb[0]), gb[1])
        # sequence length ---------------------------------------------------------------------
        seq = self._first(
            (
                "seq_length",
                "seq_len",
                "training.seq_len",
                "max_seq_length",
                "max_seq_len",
                "block_size",
                "sequence_length",
                "context_length",
                "encoder_seq_length",
                "max_source_length",
                "ctx_len",
                "max_length",
                "max_len",
                "max_seq",
            )
        )
        if seq is None:
            for rel, c in self.calls:
                tail = c["func"].rsplit(".", 1)[-1]
                if (
                    tail in {"tokenizer", "tokenize", "tok", "encode", "__call__"}
                    or "truncation" in c["kwargs"]
                ):
                    if "max_length" in c["kwargs"]:
                        ok, v, ev = R.eval(c["kwargs"]["max_length"])
                        if ok and isinstance(v, int):
                            seq = (v, [f"{rel}:{c['line']}", *ev])
                            break
        if seq is not None and to_int(seq[0]):
            r.put("seq_len", to_int(seq[0]), seq[1])
        # duration ------------------------------------------------------------------------------
        steps = None
        if "max_steps" in self.lightning and to_int(self.lightning["max_steps"][0]) not in (None, -1):
            steps = self.lightning["max_steps"]
        if steps is None:
            steps = self._first(STEPS)
        if steps is not None and (to_int(steps[0]) or 0) > 0:
            r.put("train_steps", to_int(steps[0]), steps[1])
        epochs = self.lightning.get("max_epochs") or self._first(EPOCHS)
        if epochs is not None and r.val("train_steps") is None:
            e = epochs[0]
            if isinstance(e, float) and e.is_integer():
                e = int(e)
            if isinstance(e, int) and e > 0:
                r.put("epochs", e, epochs[1])

    # ------------------------------------------------------------------ precision
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
            v = _precision_word(mp[0])
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
                    w = _precision_word(v) if ok else None
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

    # ------------------------------------------------------------------ parallelism
    def _parallelism(self) -> None:
        r, P, L = self.r, self.r.params, self.r.launch
        assert L is not None
        for fname, names in (
            ("parallelism.tensor", TP),
            ("parallelism.pipeline", PP),
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


def _precision_word(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).lower().replace("torch.", "")
    if s in {"no", "none", "32", "32-true", "fp32", "float32", "false", "64", "64-true"}:
        return "fp32"
    if "fp8" in s or "float8" in s:
        return "fp8"
    if "bf16" in s or "bfloat16" in s:
        return "bf16"
    if s in {"16", "16-mixed", "fp16", "float16", "half", "true", "16-true", "mixed_float16", "amp"}:
        return "fp16"
    if "mixed_bfloat16" in s:
        return "bf16"
    return None


def run_static(
    wd: Workdir,
    command: str,
    env: dict[str, str] | None = None,
    launcher_config: str | None = None,
    py_cache: Any = None,
) -> StaticResult:
    return StaticPass(wd, command, env, launcher_config, py_cache).run()
