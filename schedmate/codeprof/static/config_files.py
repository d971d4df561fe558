"""Config files of the job: the ones the command line, the code and Hydra name, read with what they inherit,
config-group overrides, and the local modules their `_target_`s name."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof import jinja_yaml
from schedmate.codeprof.config_tree import load_tree
from schedmate.codeprof.configs import flatten
from schedmate.codeprof.params import (
    COMMAND_LINE,
    CONFIG,
    CONFIG_OVERRIDE,
    norm,
    training_leaf,
)
from schedmate.codeprof.static.script_paths import path_from_script_dir
from schedmate.codeprof.static.table_select import select_tables
from schedmate.codeprof.task_lists import single_training_task

# keys that make a config with DeepSpeed's keys also a model/run config (GPT-NeoX YAMLs)
_MODEL_KEYS = {"num_layers", "hidden_size", "train_iters", "seq_length", "num_attention_heads"}
_DEEPSPEED_BATCH_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps"}


class ConfigFilesMixin:
    """Config files of the job (see the module docstring)."""

    def _config_paths(self) -> list[tuple[str, str, int]]:
        """(workdir-relative path, evidence, layer) of the config files the job uses."""
        P = self.r.params
        L = self.r.launch
        assert L is not None
        out: list[tuple[str, str, int]] = []
        base = str(PurePosixPath(self.r.entry).parent) if self.r.entry else L.base

        def add(path: Any, where: str, layer: int) -> None:
            if isinstance(path, str) and re.fullmatch(r"[\w./-]+\.py:[\w,=.-]*", path):
                path, arg = path.split(":", 1)  # ml_collections `config.py:variant`: `get_config(variant)`
                self.__dict__.setdefault("_config_arg", {})[path] = arg
            if isinstance(path, str) and re.fullmatch(r"[\w-]+(/[\w.-]+)*", path) and "." not in path[-6:]:
                path = self._config_by_name(path, (L.base, base, "")) or path
            if not isinstance(path, str) or not path.lower().endswith(
                (".yaml", ".yml", ".json", ".toml", ".py", ".gin", ".jsonnet", ".libsonnet", ".ini", ".cfg")
            ):
                return
            for root in (L.base, base, ""):
                rel = self.wd.rel(path, root)
                if rel and self.wd.exists(rel):
                    seen = [o for o in out if o[0] == rel]
                    if seen and seen[0][2] < layer:  # loaded in code and also given on the command line
                        out.remove(seen[0])
                        seen = []
                    if not seen and rel != self.r.entry and rel not in self.r.py:
                        out.append((rel, where, layer))
                    return
            self.r.notes.append(f"config {path} named at {where} is not in the workdir")

        # configs the code loads by a literal path first: they are the defaults that a config chosen by an
        # option (`OmegaConf.merge(OmegaConf.load('defaults.yaml'), OmegaConf.load(args.config))`) overrides
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
                "read",  # configparser: `config.read("train.ini")`
            }:
                for a in c["args"][:1]:
                    m = re.fullmatch(r"""['"]([^'"]+\.(?:ya?ml|json|toml|ini|cfg))['"]""", a)
                    if m:
                        add(m.group(1), f"{rel}:{c['line']}", CONFIG)
                    elif (built := path_from_script_dir(a, rel)) and re.search(r"\.(ya?ml|json|toml|ini|cfg)$", built):
                        add(built, f"{rel}:{c['line']}", CONFIG)  # `os.path.join(os.path.dirname(__file__), ...)`
        for key, pv in P.items():
            leaf = key.rsplit(".", 1)[-1]
            if re.search(
                r"(^|_)(config|cfg|conf|exp)(_(file|path|name))?$|(^|_)(yaml|hparams_file|gin_files?)$"
                r"|(^|_)args?_(file|path|json)$", leaf
            ) and not re.search(r"deepspeed|ds_config", leaf):
                add(pv.value, pv.where[0], CONFIG if pv.layer < COMMAND_LINE else CONFIG_OVERRIDE)
            elif pv.layer >= COMMAND_LINE and isinstance(pv.value, str) and pv.value.lower().endswith((".yaml", ".yml")) \
                    and not re.search(r"deepspeed|ds_config|accelerate|data|dataset", leaf):
                add(pv.value, pv.where[0], CONFIG_OVERRIDE)  # `--fname configs/x.yaml`: a YAML the job is given
        for p in self._positional:
            add(p, L.args_where[0], CONFIG_OVERRIDE)
        return out

    def _config_by_name(self, name: str, roots: tuple[str, ...]) -> str | None:
        """A config named without its extension (`--config llama3_1/8B_full`, a Hydra config name): the
        YAML next to the job, else the one file anywhere in the workdir whose path ends that way."""
        for ext in (".yaml", ".yml"):
            for root in roots:
                rel = self.wd.rel(name + ext, root)
                if rel and self.wd.exists(rel):
                    return rel
        hits = [h for ext in (".yaml", ".yml") for h in self.wd.find_by_suffix(name + ext)]
        if len(hits) == 1:
            self.r.notes.append(f"config {name} found as {hits[0]}")
            return hits[0]
        if len(hits) > 1:
            self.r.notes.append(f"config {name} is ambiguous ({', '.join(hits[:3])}); not read")
        return None

    def _config_files(self) -> None:
        self._hydra()
        self._configargparse_files()
        gin_read = self._gin_files()
        for rel, _where, layer in self._config_paths():
            if rel in gin_read:
                continue
            if rel.endswith(".py") and re.search(r"^class \w+.*:\s*$[\s\S]*?def __init__\(self",
                                                  self.wd.read_text(rel) or "", re.MULTILINE):
                # a class-based config (YOLOX `-f exps/x.py`): its classes' `__init__` values over their bases
                self._read_python(rel, entry=True)
                self._class_defaults(named={rel}, layer=layer)
                continue
            for parent in self._recursive_defaults(rel):
                self._load_config(parent, CONFIG, prefix="")
            self._load_config(rel, layer, prefix="")
        self._group_overrides()
        self._target_modules()
        # `cfg.param = cfg.param[cfg.dataset_name]`: the block of a per-name table the run uses
        entry = [self.r.entry] if self.r.entry in self.r.py else []
        files = entry + [f for f in self.r.py if f not in entry]
        self.r.notes.extend(select_tables(self.r.params, self.r.py, files))
        self._trainer_sections()

    def _trainer_sections(self) -> None:
        """`Trainer(**cfg.section)`, LightningCLI's default devices, per-split batch sizes
        (static/trainer_sections.py)."""
        from schedmate.codeprof.static import trainer_sections as ts

        files = list(self.r.py)
        for rel in list(self.r.py):  # the Trainer is often built one import further (`builders/training.py`)
            for imp in self.r.py[rel].get("imports", []):
                cand = self._import_file(imp, str(PurePosixPath(rel).parent))
                if cand is not None and cand not in files and len(files) < ts.MAX_FILES:
                    files.append(cand)
        self.r.notes.extend(ts.copy_trainer_sections(self.r.params, files, self.wd.read_text))
        ts.train_split_batches(self.r.params)
        if (where := ts.lightning_cli_auto_devices(self.r.params, self.r.py, self.calls)) is not None:
            self.r.notes.append(f"LightningCLI at {where} sets no trainer.devices: Lightning's default 'auto'")

    def _configargparse_files(self) -> None:
        """configargparse `key = value` files (`--config configs/x.txt` declared `is_config_file=True`, else the
        parser's `default_config_files`): over the parser's defaults, under the command line
        (`codeprof/configargparse_files.py`)."""
        from schedmate.codeprof import configargparse_files as cap

        calls = [c for _f, c in self.calls]
        flags = self._flag_dest()
        chosen: list[tuple[str, int]] = []
        for spellings, _line in cap.config_file_flags(calls):
            dest = flags.get(spellings[-1], (norm(spellings[-1]), None))[0]
            pv = self.r.params.get(dest)
            if pv is not None and isinstance(pv.value, str) and pv.value:
                chosen.append((pv.value, CONFIG_OVERRIDE if pv.layer >= COMMAND_LINE else CONFIG))
        if not chosen:
            chosen = [(p, CONFIG) for p in cap.default_config_files(calls)]
        base = str(PurePosixPath(self.r.entry).parent) if self.r.entry else ""
        for path, layer in chosen:
            roots = ((self.r.launch.base if self.r.launch else ""), base, "")
            rel = next((r for root in roots if (r := self.wd.rel(path, root)) and self.wd.exists(r)), None)
            text = self.wd.read_text(rel) if rel else None
            if text is None or not cap.looks_like_keyvalue(text):
                if text is None:
                    self.r.notes.append(f"configargparse file {path} is not in the workdir")
                continue
            if rel not in self.r.configs:
                self.r.configs.append(rel)  # type: ignore[arg-type]
            for key, value, line in cap.parse_keyvalue(text):
                dest = flags.get(f"--{key}", (norm(key), None))[0]
                self.r.params.set(dest, value, f"{rel}:{line}", layer)  # a lower layer never replaces a higher

    def _recursive_defaults(self, rel: str) -> list[str]:
        """`default.yaml` files in the directories above a config, outermost first, when the code loads its
        config recursively (`setup_exp_config(path, recursive=True)`, torchpack's `configs.load(path,
        recursive=True)`): each directory's defaults sit under the configs below it, the named file on top."""
        if not rel.endswith((".yaml", ".yml")) or not any(
            str(c["kwargs"].get("recursive")) == "True" and re.search(r"config|load", c["func"], re.IGNORECASE)
            for _f, c in self.calls
        ):
            return []
        ext = PurePosixPath(rel).suffix
        out: list[str] = []
        for d in PurePosixPath(rel).parents:
            cand = str(d / f"default{ext}") if str(d) != "." else f"default{ext}"
            if cand != rel and self.wd.exists(cand):
                out.append(cand)
        return out[::-1]

    def _group_overrides(self) -> None:
        """Hydra config-group choices on the command line (`+config/pretrain/models=resnet50_w2`,
        `model=large`): the group's option file is merged over the config, at its `@package`."""
        roots = (self.r.launch.base if self.r.launch else "", "")
        for group, choice in self._hydra_overrides.items():
            if not re.fullmatch(r"[\w-]+", choice) or not re.fullmatch(r"[\w-]+(/[\w-]+)*", group):
                continue
            rel = self._config_by_name(f"{group}/{choice}", roots)
            if rel is None or rel in self.r.configs:
                continue
            head = (self.wd.read_text(rel) or "")[:400]
            m = re.search(r"#\s*@package\s+(\S+)", head)
            package = m.group(1) if m else "_group_"
            prefix = "" if package == "_global_" else (group.replace("/", ".") if package == "_group_" else package)
            self._load_config(rel, CONFIG_OVERRIDE, prefix=prefix)

    def _target_modules(self) -> None:
        """Local modules named by config `_target_`s (Hydra/OmegaConf instantiate): read them like imports."""
        for key, pv in self.r.params.items():
            if not key.endswith("._target_") or not isinstance(pv.value, str) or len(self.r.py) >= 16:
                continue
            parts = pv.value.split(".")
            for k in range(len(parts) - 1, 0, -1):
                cand = self.wd.rel("/".join(parts[:k]) + ".py", "")
                if cand and self.wd.exists(cand):
                    self._read_python(cand)
                    break

    def _load_config(self, rel: str, layer: int, prefix: str = "") -> dict[str, Any] | None:
        text = self.wd.read_text(rel)
        if text is None:
            self.r.notes.append(f"config {rel} not read ({self.wd.skipped.get(rel, 'missing')})")
            return None
        arg = next((a for p, a in self.__dict__.get("_config_arg", {}).items() if rel.endswith(p.lstrip("./"))), None)
        tree = load_tree(self.wd.read_text, rel, self.r.launch.env if self.r.launch else {}, arg,
                         self._template_context(text))
        return self._take_tree(rel, tree, text, layer, prefix)

    def _template_context(self, text: str) -> dict[str, str]:
        """The command line's `--name value` pairs when the job renders its Jinja-templated config from them
        (`jinja_yaml.py`); else nothing, and the placeholders stay open."""
        if self.r.launch is None or not jinja_yaml.is_template(text):
            return {}
        if not jinja_yaml.renders_from_command_line([self.wd.read_text(f) or "" for f in self.r.py]):
            return {}
        return jinja_yaml.command_context(self.r.launch.args)

    def _gin_files(self) -> set[str]:
        """The job's gin files (`--gin_file`, `--gin_configs`; else the gin-file flags' defaults) composed in
        order with the command line's `--gin_bindings` over them (`codeprof/gin_config.py`)."""
        from schedmate.codeprof import gin_config

        L = self.r.launch
        files, bindings = gin_config.command_line(getattr(self, "_args", None) or (L.args if L else []))
        if not files:
            for key, pv in self.r.params.items():
                if "." not in key and re.fullmatch(r"gin_(config|configs|file|files|config_files?)", key):
                    vals = pv.value if isinstance(pv.value, (list, tuple)) else [pv.value]
                    files.extend(v for v in vals if isinstance(v, str) and v.endswith(".gin"))
        base = str(PurePosixPath(self.r.entry).parent) if self.r.entry else (L.base if L else "")
        rels = []
        for path in files:
            rel = next((r for root in ((L.base if L else ""), base, "") if (r := self.wd.rel(path, root))
                        and self.wd.exists(r)), None)
            if rel is None:
                self.r.notes.append(f"gin file {path} is not in the workdir")
            elif rel not in rels:
                rels.append(rel)
        if not rels:
            return set()
        tree = gin_config.compose(self.wd.read_text, rels, bindings)
        self._take_tree(rels[-1], tree, self.wd.read_text(rels[-1]) or "", CONFIG_OVERRIDE, "")
        return set(tree.files)

    def _take_tree(self, rel: str, tree: Any, text: str, layer: int, prefix: str) -> dict[str, Any] | None:
        self.r.notes.extend(n for n in tree.notes if n not in self.r.notes)
        if rel not in tree.files:
            return None
        cfg = tree.data
        for f in tree.files:
            if f not in self.r.configs:
                self.r.configs.append(f)
        if "zero_optimization" in cfg or "train_micro_batch_size_per_gpu" in cfg:
            self._ds_cfg = (rel, cfg, text)
            if not any(norm(k) in _MODEL_KEYS for k in cfg):
                return cfg  # a DeepSpeed config: read through `_ds_value`
            # a GPT-NeoX config: DeepSpeed's keys (read through `_ds_value`) beside the model and run settings
            cfg = {k: v for k, v in cfg.items() if norm(k) not in _DEEPSPEED_BATCH_KEYS}
        flat = flatten(cfg)
        if (task := single_training_task(cfg)) is not None:  # `TASKS: [{NAME: ..., DATALOADER: {...}}]`
            flat += [(f"{task[0]}.{k}", v) for k, v in flatten(task[1])]
        wheres = tree.where
        leaf_vals: dict[str, set[str]] = {}
        for k, v in flat:  # an evaluation/test section's value never makes the training leaf ambiguous
            if training_leaf(norm(k)):
                leaf_vals.setdefault(k.rsplit(".", 1)[-1], set()).add(repr(v))
        for k, v in flat:
            if k == "defaults" or isinstance(v, list) and k.endswith("defaults"):
                continue
            key = f"{prefix}.{k}" if prefix else k
            cur = self.r.params.get(key) if "." in key else self.r.params._full.get(norm(key))
            if cur is not None and cur.layer >= COMMAND_LINE:
                continue
            self.r.params.set(
                key, v, wheres.get(k, f"{rel}:1"), layer, leaf=len(leaf_vals.get(k.rsplit(".", 1)[-1], ())) <= 1
            )
        return cfg

    def _hydra(self) -> None:
        """A `@hydra.main(config_path, config_name)` entry: the config Hydra would compose (defaults lists,
        group choices and overrides from the command line, packages, interpolations)."""
        from schedmate.codeprof.hydra_compose import compose
        from schedmate.codeprof.static.hydra_paths import _is_literal as _literal
        from schedmate.codeprof.static.hydra_paths import locate_hydra_config

        self._ds_cfg: tuple[str, dict[str, Any], str] | None = None
        for rel, c in self.calls:
            if not c["func"].endswith("hydra.main") and c["func"] != "main":
                continue
            cli_cp = self.r.params.get("config_path", "cp")  # Hydra's own --config-path/--config-name win
            cli_cn = self.r.params.get("config_name", "cn")
            if cli_cn is not None and cli_cn.layer < COMMAND_LINE:
                cli_cn = None
            cp = c["kwargs"].get("config_path", "'.'").strip("'\"")
            cn = c["kwargs"].get("config_name", "''").strip("'\"")
            located = None
            if not _literal(c["kwargs"].get("config_path", "'.'")) or not _literal(c["kwargs"].get("config_name", "''")):
                # `config_path=str(ROOT / "conf")`, `config_name=CONFIG_NAME`: hydra_paths.py
                got = locate_hydra_config(self.wd.exists, rel, c["kwargs"].get("config_path", "'.'"),
                                          c["kwargs"].get("config_name", "''"), self.r.py.get(rel, {}).get("assigns", []))
                if got is not None:
                    located, cp, cn = got[0] or ".", got[0] or ".", got[1]
            legacy = "strict" in c["kwargs"]  # a Hydra 0.x argument
            if "config_name" not in c["kwargs"] and cp.endswith((".yaml", ".yml")):
                # Hydra 0.x: `config_path` names the primary config file itself
                cp, cn, legacy = str(PurePosixPath(cp).parent), PurePosixPath(cp).stem, True
            elif "config_name" not in c["kwargs"] and cli_cn is None:
                continue
            if cli_cp is not None and cli_cp.layer >= COMMAND_LINE and isinstance(cli_cp.value, str):
                cp = cli_cp.value
                rel = self.r.entry or rel
            if cli_cn is not None and cli_cn.layer >= COMMAND_LINE and isinstance(cli_cn.value, str):
                cn = cli_cn.value
            root = located if located and cp == located else (self.wd.rel(cp, str(PurePosixPath(rel).parent)) or "")
            main = self.wd.rel(cn if cn.endswith((".yaml", ".yml")) else f"{cn}.yaml", root)
            if not main or not self.wd.exists(main):
                self.r.notes.append(f"hydra config {cp}/{cn}.yaml named at {rel}:{c['line']} not found")
                return
            L = self.r.launch
            overrides = [a for a in (L.args if L else []) if re.match(r"^[+~]{0,2}[A-Za-z_][\w./@-]*=", a)]
            tree = compose(self.wd.read_text, "" if root == "." else root, cn, overrides,
                           L.env if L else {}, legacy=legacy)
            self.r.notes.extend(n for n in tree.notes if n not in self.r.notes)
            for f in tree.files:
                if f not in self.r.configs:
                    self.r.configs.append(f)
            leaf_vals: dict[str, set[str]] = {}
            flat = flatten(tree.data)
            for k, v in flat:
                if training_leaf(norm(k)):
                    leaf_vals.setdefault(k.rsplit(".", 1)[-1], set()).add(repr(v))
            for k, v in flat:
                where = tree.where.get(k, main)
                if where == "cmd":
                    continue  # the command line's own values are already in, at their layer
                cur = self.r.params.get(k) if "." in k else None
                if cur is not None and cur.layer >= COMMAND_LINE:
                    continue
                self.r.params.set(k, v, where, CONFIG, leaf=len(leaf_vals.get(k.rsplit(".", 1)[-1], ())) <= 1)
            return
