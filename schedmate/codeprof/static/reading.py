"""Reading the job: the entry script and its local imports, code defaults, the command line, config files (with inheritance) and Hydra."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from schedmate.codeprof.absl_flags import expand_flagfiles
from schedmate.codeprof.configs import ConfigError, flatten, parse_config
from schedmate.codeprof.legacy_python import repair_legacy
from schedmate.codeprof.params import (
    CODE_DEFAULT,
    COMMAND_LINE,
    CONFIG,
    CONFIG_OVERRIDE,
    LIBRARY_DEFAULT,
    norm,
)
from schedmate.codeprof.pyast import analyze_python, default_pairs
from schedmate.codeprof.static.class_attributes import class_attribute_defaults
from schedmate.codeprof.static.epoch_steps import shadowed_lengths
from schedmate.codeprof.static.fire_cli import fire_defaults
from schedmate.codeprof.static.libraries import libraries_used
from schedmate.codeprof.static.names import (
    HF_DEFAULTS,
    parse_scalar,
)
from schedmate.codeprof.yacs_config import STRICT_KEY, declares_opts, flags_into_fields, opts_key

# classes whose `__init__` holds a job's settings (YOLOX `Exp`, `Config`, `TrainArgs`, `HParams`, ...)
CONFIG_CLASS = re.compile(r"(Exp|Config|Cfg|Args|Arguments|Hparams|HParams|Settings|Options|Opts|Trainer)$")
MAX_PYTHON_FILES = 16
"""Python files the static pass reads for one job (the entry, its local imports, re-exporting packages)"""
# a yacs config key given on the command line as `KEY VALUE` (detectron2/SlowFast/pycls `opts`, `--opts`)
YACS_KEY = STRICT_KEY
_YACS_ANY = re.compile(r"[A-Z][A-Z0-9_]*(\.[A-Z][A-Z0-9_]*)*")


def _yacs_tail(args: list[str], loose: bool = False) -> int:
    """Where the trailing yacs `KEY VALUE` pairs start (`... GPUS '(0,1)' TRAIN.BATCH_SIZE_PER_GPU 64`): the
    longest run of pairs at the end whose keys are upper-case config names (or, when the script declares
    `opts`, dotted keys with lower-case fields), one of them dotted or right after `--opts`; len(args) when
    there is none."""
    start = len(args)
    k = len(args) - 2
    while k >= 0 and (_YACS_ANY.fullmatch(args[k]) or opts_key(args[k], loose)) and not args[k + 1].startswith("--"):
        start = k
        k -= 2
    tail = args[start::2]
    if start < len(args) and (any("." in key for key in tail) or (start > 0 and args[start - 1] in {"--opts", "opts"})):
        return start
    return len(args)


def _yacs_value(text: str) -> Any:
    """A yacs override's value as yacs reads it (`literal_eval`, else the string): `'(0,1)'` is a tuple."""
    import ast

    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return parse_scalar(text)
    return v if isinstance(v, (int, float, bool, tuple, list, str)) else parse_scalar(text)


class ReadingMixin:
    """Reading the job: the entry script and its local imports, code defaults, the command line, config files (with inheritance) and Hydra."""

    def _read_python(self, rel: str, entry: bool = False) -> dict[str, Any] | None:
        """Read one Python file; for the entry (and Python configs named on the command line), also the local
        modules it imports, one level deep, and through package `__init__`s the modules they re-export."""
        if rel in self.r.py:
            return self.r.py[rel]
        text = self.wd.read_text(rel)
        if text is None:
            why = self.wd.skipped.get(rel, "missing")
            self.r.notes.append(f"{rel}: not read ({why})")
            return None
        try:
            summary = self.py_cache(rel, text) if self.py_cache else analyze_python(text)
        except SyntaxError as e:
            fixed = repair_legacy(text)  # old Python (`.cuda(async=True)`, `print "x"`): read the rest
            if fixed is None:
                self.r.notes.append(f"{rel}:{e.lineno}: Python syntax error, file skipped: {e.msg}")
                return None
            summary = analyze_python(fixed[0])
            self.r.notes.append(f"{rel}: read as legacy Python" + (
                f", lines {', '.join(map(str, fixed[1]))} skipped" if fixed[1] else ""))
        self.r.py[rel] = summary
        self.calls.extend((rel, c) for c in summary["calls"])
        if entry:
            self._follow_imports(rel, summary)
        return summary

    def _follow_imports(self, rel: str, summary: dict[str, Any]) -> None:
        """Breadth first: the file's own imports, then what the package `__init__`s among them re-export."""
        queue = [(rel, summary)]
        while queue:
            cur, s = queue.pop(0)
            base = str(PurePosixPath(cur).parent)
            for imp in s["imports"]:
                cand = self._import_file(imp, base)
                if cand is None or cand in self.r.py:
                    continue
                if len(self.r.py) >= MAX_PYTHON_FILES:
                    if cand not in self.over_budget:  # not read; `devices.py` still looks for worker launchers in it
                        self.over_budget.append(cand)
                    continue
                got = self._read_python(cand)
                if got is not None and cand.endswith("__init__.py"):
                    queue.append((cand, got))

    def _import_file(self, imp: str, base: str) -> str | None:
        """The workdir file an import names (module or package). An absolute one is looked up from the importer's
        directory, the launch directory, the root of a `python -m` entry's package and the root; a relative one
        (`..cfg.x`, as `pyast` records it) only from the importer's package less `level - 1` parents, as Python
        resolves it (None when that climbs out of the workdir)."""
        name = imp.lstrip(".")
        level = len(imp) - len(name)
        roots = None
        if level:
            parts = [p for p in PurePosixPath(base).parts if p != "."]
            if level - 1 > len(parts):
                return None
            pkg = "/".join(parts[: len(parts) - (level - 1)])
            if not name:  # `from . import config`: the package itself (`config` may be a name of its `__init__`)
                init = f"{pkg}/__init__.py" if pkg else "__init__.py"
                return init if self.wd.exists(init) else None
            roots = (pkg,)
        parts = name.split(".")
        for k in range(len(parts), 0, -1):
            if found := self._module_file("/".join(parts[:k]), base, roots):
                return found
        return None

    def _module_file(self, stem: str, base: str, roots: tuple[str, ...] | None = None) -> str | None:
        """`stem.py` or `stem/__init__.py`, from the importer's directory, the launch directory, the `python -m`
        package root or the root (from `roots` alone when given)."""
        for root in roots if roots is not None else (base, self.r.launch.base if self.r.launch else "",
                                                     self._module_root(), ""):
            for path in (f"{stem}.py", f"{stem}/__init__.py"):
                cand = self.wd.rel(path, root)
                if cand and self.wd.exists(cand):
                    return cand
        return None

    def _module_root(self) -> str:
        """Where `python -m a.b.train` finds package `a` (the entry's directory less one parent per dot:
        `src` for `src/a/b/train.py`), so the entry's absolute imports of its own package resolve; '' else."""
        L = self.r.launch
        if not (L and L.module and L.script):
            return ""
        parts = list(PurePosixPath(L.script).parts)
        if parts and parts[-1] == "__main__.py":
            parts.pop()
        up = L.module.count(".") + 1
        return "/".join(parts[: len(parts) - up]) if len(parts) >= up else ""

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

    def _uses_hf_args(self) -> bool:
        for s in self.r.py.values():
            if any(
                c.split(".")[-1] in {"TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig"}
                for c in s["hf_parser"]
            ):
                return True
        return False

    def _cli_class_defaults(self) -> None:
        """`LightningCLI(LitModel, LitData)`: the `__init__` keyword defaults of the model and datamodule classes
        are the run's settings (`data.batch_size`, `model.lr`) unless the CLI's config or flags give them."""
        import ast as _ast

        from schedmate.codeprof.pyast import const_eval

        P = self.r.params
        for c in [c for _, c in self.calls if c["func"].rsplit(".", 1)[-1] == "LightningCLI"]:
            names = [a for a in c["args"][:2]] + [c["kwargs"][k] for k in ("model_class", "datamodule_class")
                                                 if k in c["kwargs"]]
            for i, cname in enumerate(names):
                section = "model" if i == 0 or cname == c["kwargs"].get("model_class") else "data"
                cname = cname.rsplit(".", 1)[-1]
                for rel, summ in self.r.py.items():
                    if not any(k["name"] == cname for k in summ["classes"]):
                        continue
                    try:
                        tree = _ast.parse(self.wd.read_text(rel) or "")
                    except SyntaxError:
                        continue
                    for cls in tree.body:
                        if not (isinstance(cls, _ast.ClassDef) and cls.name == cname):
                            continue
                        init = next((f for f in cls.body if isinstance(f, _ast.FunctionDef)
                                     and f.name == "__init__"), None)
                        if init is None:
                            continue
                        pos = init.args.args
                        for arg, default in zip(pos[len(pos) - len(init.args.defaults):], init.args.defaults,
                                                strict=True):
                            ok, v = const_eval(default)
                            key = f"{section}.{arg.arg}"
                            if ok and isinstance(v, (int, float, str)) and not isinstance(v, bool) \
                                    and P.get_path(key) is None:
                                P.set(key, v, f"{rel}:{default.lineno}", CODE_DEFAULT)

    def _configurable_defaults(self) -> None:
        """Keyword defaults of the entry script's gin-configurable functions (`@gin.configurable def
        train_eval(..., batch_size=32, num_iterations=...)`): the values the run uses unless a gin binding
        (`train_eval.batch_size = 64`) or a flag passed in the call replaces them."""
        import ast as _ast

        from schedmate.codeprof.pyast import const_eval

        text = self.wd.read_text(self.r.entry) if self.r.entry else None
        try:
            tree = _ast.parse(text or "")
        except SyntaxError:
            return
        P = self.r.params
        for fn in tree.body:
            if not isinstance(fn, _ast.FunctionDef) or not any(
                    "configurable" in _ast.unparse(d) for d in fn.decorator_list):
                continue
            for arg, default in default_pairs(fn.args):
                ok, v = const_eval(default)
                if ok and isinstance(v, (int, float, str)) and not isinstance(v, bool) and P.get(arg.arg) is None:
                    P.set(arg.arg, v, f"{self.r.entry}:{default.lineno}", CODE_DEFAULT)

    def _defaults(self) -> None:
        P = self.r.params
        if self._uses_hf_args():
            for k, v in HF_DEFAULTS.items():
                P.set(k, v, "transformers.TrainingArguments default", LIBRARY_DEFAULT)
        imports = {i for s in self.r.py.values() for i in s["imports"]}
        tails = {c["func"].rsplit(".", 1)[-1] for _, c in self.calls}
        programs = set(self.r.launch.chain) if self.r.launch else set()
        self._libraries = libraries_used(imports, tails, programs)
        for lib in self._libraries:
            for f in lib.flags:
                P.set(f.dest, f.default, f"{lib.name} argument parser default", LIBRARY_DEFAULT)
            for k, v in lib.config_defaults.items():
                P.set(k, v, f"{lib.name} config default", LIBRARY_DEFAULT)
        for rel in list(self.r.py):
            self._attribute_defaults(rel)
            for key, v, line in class_attribute_defaults(self.wd.read_text(rel) or "", CONFIG_CLASS):
                P.set(key, v, f"{rel}:{line}", CODE_DEFAULT)  # `class Config: epoch = 14` + `opt = Config()`
        self._class_defaults()
        self._configurable_defaults()
        first = next((a for a in self.r.launch.args if not a.startswith("-")), None) if self.r.launch else None
        for key, v, line in fire_defaults((self.wd.read_text(self.r.entry) or "") if self.r.entry else "", first):
            P.set(key, v, f"{self.r.entry}:{line}", CODE_DEFAULT)  # `fire.Fire(train)`: train's keyword defaults
        self._cli_class_defaults()
        stars = self._star_constants()
        for rel, s in self.r.py.items():
            for a in s["argparse"]:
                if a.get("main_only") and rel != self.r.entry:
                    continue  # defined under another module's `if __name__ == "__main__":`, which never runs
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

                known_globals: dict[str, Any] = dict(stars)  # `from hparams import *` names, used bare
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
                        flat = [(k, x) for k, x in flatten(v, a["target"]) if isinstance(x, (int, float, str, bool))]
                        sub = shadowed_lengths([k for k, _ in flat])  # `{"train_epochs": 12, "ema": {"epochs": 10}}`
                        for k, x in flat:  # CFG = {"epochs": 50} -> cfg.epochs
                            P.set(k, x, f"{rel}:{a['line']}", CODE_DEFAULT, leaf=k not in sub)

    def _star_constants(self) -> dict[str, Any]:
        """Constants the entry takes in through `from x import *` (at any depth, `static/star_imports.py`):
        code defaults under their bare names, below the entry's own module constants."""
        from schedmate.codeprof.static.star_imports import star_constants

        if not self.r.entry:
            return {}

        def find(module: str, base: str) -> str | None:
            return self._module_file(module.replace(".", "/"), base)

        out: dict[str, Any] = {}
        for name, v, where in star_constants(self.r.entry, self.wd.read_text, find):
            self.r.params.set(name, v, where, CODE_DEFAULT)
            out[name] = v
        return out

    def _class_defaults(self, named: set[str] = frozenset(), layer: int = CODE_DEFAULT) -> None:
        """Config classes that set their values in `__init__` (`class Exp(BaseExp): def __init__(self):
        self.max_epoch = 300`): base classes first, so a subclass's value wins; files in `named` (a config
        file the command line names) at `layer`."""
        import ast as _ast

        from schedmate.codeprof.pyast import const_eval

        classes: dict[str, tuple[str, dict[str, Any]]] = {}
        for rel, s in self.r.py.items():
            for c in s["classes"]:
                classes.setdefault(c["name"], (rel, c))

        def configish(name: str, seen: frozenset[str] = frozenset()) -> bool:
            if CONFIG_CLASS.search(name):
                return True
            rel_c = classes.get(name)
            return bool(rel_c) and name not in seen and any(
                configish(b.rsplit(".", 1)[-1], seen | {name}) for b in rel_c[1]["bases"])

        def depth(name: str, seen: frozenset[str] = frozenset()) -> int:
            rel_c = classes.get(name)
            if rel_c is None or name in seen:
                return 0
            return 1 + max((depth(b.rsplit(".", 1)[-1], seen | {name}) for b in rel_c[1]["bases"]), default=0)

        for rel, s in sorted(self.r.py.items(), key=lambda kv: (kv[0] in named, 0)):
            owners = sorted((c["name"] for c in s["classes"] if configish(c["name"])), key=depth)
            for owner in owners:
                for a in s["assigns"]:
                    if a["scope"] != f"{owner}.__init__" if "scope" in a else True:
                        continue
                    if not a["target"].startswith("self.") or a["target"].count(".") != 1 or a["op"] or a["when"]:
                        continue
                    try:
                        ok, v = const_eval(_ast.parse(a["expr"], mode="eval").body)
                    except SyntaxError:
                        continue
                    if ok and isinstance(v, (int, float, str, bool)):
                        self.r.params.set(a["target"][5:], v, f"{rel}:{a['line']}", layer if rel in named else CODE_DEFAULT)

    def _attribute_defaults(self, rel: str) -> None:
        """Default-config modules built by attribute assignment (yacs `_C.TRAIN.EPOCHS = 300`,
        ml_collections `config.num_train_steps = ...`): their values are code defaults."""
        import ast

        from schedmate.codeprof.config_tree import attribute_tree

        text = self.wd.read_text(rel) or ""
        if not re.search(r"=\s*(?:[\w.]*\.)?(?:CN|CfgNode|ConfigDict|EasyDict|edict|AttrDict)\(", text):
            return
        try:
            body = ast.parse(text).body
        except SyntaxError:
            return
        fns = [n for n in body if isinstance(n, ast.FunctionDef) and n.name in {"get_config", "get_cfg"}]
        for stmts in [body, *(f.body for f in fns)]:
            data, lines = attribute_tree(stmts)
            for key, value in flatten(data):
                if isinstance(value, (int, float, str, bool)):
                    self.r.params.set(key, value, f"{rel}:{lines.get(key, 1)}", CODE_DEFAULT)

    def _flag_dest(self) -> dict[str, tuple[str, Any]]:
        """flag spelling -> (dest, action)."""
        out: dict[str, tuple[str, Any]] = {}
        for lib in self._libraries:
            for f in lib.flags:
                for spelling in f.flags:
                    out[spelling] = (f.dest, f.action)
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
        if any(re.match(r"--?flagfile(=|$)", a) for a in args):  # absl: the flags written in the file, in place
            def read(path: str) -> str | None:
                rel = self.wd.rel(path, L.base)
                return self.wd.read_text(rel) if rel else None

            args = expand_flagfiles(args, read, "", self.r.notes)
        self._args = args
        positional: list[str] = []
        loose = declares_opts(list(self.r.py.values()))  # yacs `opts`: `TRAIN.num_epoch 10` too
        yacs_from = _yacs_tail(args, loose)
        # ml_collections `--config cfg.py --config.training.batch_size=256`: a field of the file's config
        file_flags = {norm(a.lstrip("-")) for a, b in zip(args, [*args[1:], ""], strict=False)
                      if a.startswith("--") and re.search(r"\.(py|ya?ml|json)(:\S*)?$", b)}
        i = 0
        while i < len(args):
            t = args[i]
            if i >= yacs_from and i + 1 < len(args):  # the yacs `opts` pairs at the end: KEY VALUE ...
                P.set(t, _yacs_value(args[i + 1]), where, COMMAND_LINE)
                i += 2
                continue
            if t.startswith("-") and len(t) > 1 and not re.fullmatch(r"-\d+(\.\d*)?", t):
                name, eq, val = t.partition("=")
                if name not in flags and name.startswith("--"):
                    # argparse takes an unambiguous prefix of a long option (`--batch` for `--batch-size`)
                    longer = {f for f in flags if f.startswith(name)}
                    if len({flags[f] for f in longer}) == 1:
                        name = min(longer)
                dest, action = flags.get(name, (norm(name), None))
                if "." in dest and dest.split(".", 1)[0] in file_flags:
                    dest = dest.split(".", 1)[1]
                if not eq and i + 1 < len(args) and opts_key(args[i + 1], loose):
                    i += 1  # `--opts KEY VALUE ...`: the pairs follow
                    continue
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
                    P.set(dest, [parse_scalar(v) for v in vals] if action == "nargs" else parse_scalar(vals[0]),
                          where, COMMAND_LINE)
                    i = j
                else:
                    P.set(dest, True, where, COMMAND_LINE)
                    i += 1
            elif opts_key(t, loose) and i + 1 < len(args):  # yacs `opts`: SOLVER.IMS_PER_BATCH 16
                P.set(t, _yacs_value(args[i + 1]), where, COMMAND_LINE)
                i += 2
            elif re.match(r"^\+{0,2}[A-Za-z_][\w./-]*=", t):  # Hydra / key=value / group=choice override
                k, _, v = t.lstrip("+").partition("=")
                P.set(k, parse_scalar(v), where, COMMAND_LINE)
                self._hydra_overrides[k] = v
                i += 1
            else:
                positional.append(t)
                i += 1
        self._positional = positional
        for field, dest, at, always in flags_into_fields(self.r.py):
            pv = P._full.get(norm(dest))
            if pv is None or "." in pv.key:
                continue
            if pv.layer >= COMMAND_LINE:
                # `if args.batch_size: config.DATA.BATCH_SIZE = args.batch_size` (yacs `update_config`)
                P.set(field, pv.value, [*pv.where, at], COMMAND_LINE)
            elif always and pv.layer == CODE_DEFAULT and pv.value is not None \
                    and (old := P._full.get(norm(field))) is not None and old.layer <= CONFIG:
                # an unguarded copy runs after the config is built: the flag's default replaces the field's
                P.set(field, pv.value, [*pv.where, at], CONFIG_OVERRIDE)
