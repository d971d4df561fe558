"""Named numeric candidates for the scheduler fields the static pass left null, and a strict decision rule.

The static pass derives facts from the settings it understands. Many jobs state a batch size, a run length or
a GPU count under a name no rule of it knows, or in a file shape it does not evaluate. This module is its last
step, style-agnostic: it lists every *named number* in what the job's command and the files the pass read
say (the parameter space it built, the Python assignments, call keywords and function defaults of the
files it read, the keys of the configs it read, `--flag value` pairs and shell variables of the scripts it
read), maps each name to a field by its tokens, and fills a field that is still null only when the evidence
is strong: one distinct value among the highest-precedence candidates of that field. A fill never replaces a
fact; it carries the candidate's `file:line` and a warning naming it, so a user sees it is weaker than a fact
the pass derived.

Nothing here executes job code; values are literals (never evaluated expressions), positive, finite and
bounded per field, so a hostile config (`1e309`, negative numbers, prose) cannot fill anything.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from schedmate.codeprof.params import COMMAND_LINE, CONFIG, CONFIG_OVERRIDE, RUNTIME, training_leaf
from schedmate.codeprof.static.loader_batch import feeds_evaluation
from schedmate.codeprof.static.loop_length import range_start_offsets

FIELDS = ("micro_batch_size", "global_batch_size", "train_steps", "epochs")
"""The fields candidates may fill. Params are a model-size question, never a named number here; the GPU count is
decided at submission (a config's `world_size: 1` is a default the launcher replaces), so it is not filled."""

# how far a value may go before it is not a plausible setting of the field
_BOUNDS = {"micro_batch_size": 65536, "global_batch_size": 1 << 24, "num_gpus": 65536,
           "train_steps": 10**9, "epochs": 100000}

# precedence of how a candidate was reached (higher wins): what the user's command says over a config file
# over a value written in code over a default
CMD, CONFIG_FILE, CODE, DEFAULT = 4, 3, 2, 1
_LAYER_RANK = {COMMAND_LINE: CMD, RUNTIME: CODE, CONFIG_OVERRIDE: CONFIG_FILE, CONFIG: CONFIG_FILE}


@dataclass(frozen=True)
class Candidate:
    field: str
    value: int
    where: str
    """`file:line`, or `cmd` for the launch command"""
    name: str
    """the name the value is bound to, as written (`train.max_epochs`, `--num-iters`, `BS`)"""
    how: str
    """how it was reached: params, assign, keyword, default, config, flag, shell"""
    rank: int
    """precedence: CMD > CONFIG_FILE > CODE > DEFAULT"""

    @property
    def unknown(self) -> bool:
        """A setting of the field whose value is not a count (`--max_steps $LEN` with LEN unset, `-1`, `auto`):
        it outranks what lower layers say, so the field stays null."""
        return self.value == UNKNOWN


UNKNOWN = 0
"""the value of a candidate that names the field but holds no usable count"""


# --- names -> fields, by tokens ------------------------------------------------------------------------------

def tokens(name: str) -> list[str]:
    """`cfg.Train.maxEpochs` -> ['cfg', 'train', 'max', 'epochs']."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name.strip().lstrip("-$"))
    return [t for t in re.split(r"[^A-Za-z0-9]+", s.lower()) if t]


# a word that makes a look-alike: the number is some other loop's, a period, a threshold or a limit
_LOOKALIKE = {
    "eval", "evaluation", "val", "valid", "validation", "test", "testing", "infer", "inference", "predict",
    "prediction", "warmup", "warm", "save", "ckpt", "checkpoint", "log", "logging", "print", "display",
    "report", "decay", "sched", "scheduler", "lr", "patience", "early", "interval", "freq", "frequency",
    "every", "sample", "samples", "sampling", "gen", "generate", "generation", "rollout", "rollouts", "buffer",
    "replay", "target", "min", "start", "resume", "skip", "anneal", "ramp", "accum", "accumulation",
    "accumulate", "grad", "gradient", "ema", "swa", "prune", "distill", "teacher", "pseudo", "seed",
    "workers", "worker", "threads", "cpu", "cpus", "eps", "epsilon", "dim", "size_divisor", "stride",
    "pretrain_steps", "diffusion", "timesteps", "timestep", "denoise", "denoising", "inner", "outer",
    "update", "updates_per", "cycle", "restart", "milestones", "milestone", "step_size", "gamma", "dev",
    "debug", "profile", "profiler", "benchmark", "bench", "dummy", "fake", "toy", "tiny", "max_len",
    "length", "len", "seq", "tokens", "token", "vocab", "hidden", "layers", "heads", "gpu_id", "id", "ids",
    "rank", "local_rank", "port", "index", "idx", "current", "cur", "done", "last", "prev", "first",
    "init", "initial", "reward", "env", "envs", "episodes", "episode", "per_epoch", "cache", "prefetch",
}
_NUMBER_WORDS = {"max", "num", "n", "nb", "total", "train", "training", "number", "of", "the", "cfg", "config",
                 "args", "opt", "opts", "hparams", "hp", "params", "solver", "trainer", "optim", "run"}
_EPOCH = {"epoch", "epochs", "nepoch", "nepochs", "nb_epoch"}
_STEPS = {"steps", "iters", "iterations", "niter", "niters", "updates", "nsteps", "niterations"}
_QUALIFIED = {"max", "total", "num", "n", "nb", "train", "training", "number"}
"""a bare `steps` is often another loop's (diffusion steps, a schedule's): a run length is qualified"""
_STEP_ONE = {"step", "iter", "iteration"}  # a bare one is a counter; with `max`/`total`/`num` before it, a length
_BATCH = {"bs", "batchsize", "batch", "mbs", "gbs", "bsz", "minibatch"}
_GLOBAL = {"global", "total", "effective", "eff", "gbs"}
_PER_DEVICE = {"per", "device", "gpu", "local", "micro", "mbs", "replica", "worker", "node", "process", "rank",
               "core", "tpu", "chip"}
_GPUS = {"gpus", "ngpu", "ngpus", "gpu", "devices", "ndevices", "world", "nproc", "nprocs", "processes",
         "gpus_per_node"}


def field_of(name: str) -> str | None:
    """The scheduler field a setting's name stands for, by its last component's tokens (the sections before it
    only rule out evaluation/sampling sections), or None."""
    key = name.strip().lstrip("-$").replace("-", "_")
    if not training_leaf(key.lower()):
        return None
    leaf = re.split(r"[.\[\]]", key)[-1] or key
    if leaf.startswith("_"):
        return None  # `self._batch_size = 1`: an object's private state, not a setting
    toks = tokens(leaf)
    joined = "_".join(toks)
    if re.fullmatch(r"(train_)?(samples|imgs|images|videos)_per_(gpu|device)", joined):
        return "micro_batch_size"
    if not toks or any(t in _LOOKALIKE for t in toks):
        return None
    if any(w in joined for w in ("per_epoch", "epoch_size", "epoch_len", "steps_per", "iters_per", "per_step",
                                 "per_iter", "batch_per_epoch")):
        return None
    rest = [t for t in toks if t not in _NUMBER_WORDS]
    # run length
    if rest and rest[-1] in _EPOCH and all(t in _EPOCH or t in {"end"} for t in rest) and toks != ["epoch"]:
        return "epochs"
    if rest and rest[-1] in _STEPS and all(t in _STEPS for t in rest) and (
            rest[-1] in {"niter", "niters", "nsteps", "niterations"} or any(t in _QUALIFIED for t in toks)):
        return "train_steps"
    if rest and rest[-1] in _STEP_ONE and len(rest) == 1 and toks[0] in {"max", "total", "num", "n", "nb"}:
        return "train_steps"
    # GPU count
    if joined in {"world_size", "nproc_per_node", "num_processes", "nprocs", "n_gpu", "n_gpus", "num_gpus",
                  "ngpu", "ngpus", "gpus", "num_gpu", "gpu_num", "num_devices", "n_devices", "ndevices",
                  "devices", "gpus_per_node", "nproc"} or (rest and all(t in _GPUS for t in rest)
                                                         and rest[-1] in {"gpus", "ngpus", "ngpu"}):
        return "num_gpus"
    # batch
    has_batch = "batch" in toks and ("size" in toks or toks[-1] == "batch") or any(t in _BATCH for t in toks) \
        or joined.endswith(("samples_per_gpu", "imgs_per_gpu", "images_per_gpu", "batchsize"))
    if not has_batch or toks[0] in {"num", "n", "nb", "number"} and not ({"size", "bs", "bsz"} & set(toks)):
        return None  # `num_mini_batch`: a count of batches, not a batch size
    allowed = _BATCH | _GLOBAL | _PER_DEVICE | _NUMBER_WORDS | {"size", "data", "loader", "dataloader", "train",
                                                                 "samples", "imgs", "images", "mini", "per"}
    if not all(t in allowed or t in {"samples", "imgs", "images"} for t in toks):
        return None
    if any(t in _GLOBAL for t in toks):
        return "global_batch_size"
    return "micro_batch_size"


# --- values -----------------------------------------------------------------------------------------------------

def as_count(value: Any, field: str) -> int | None:
    """A positive whole number within the field's bounds, or None (bools, prose, 1e309, negatives, 2.5)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        t = value.strip().strip("\"'")
        if not re.fullmatch(r"\d{1,12}|\d+(\.\d*)?[eE]\+?\d{1,2}", t):
            return None
        try:
            value = float(t) if not t.isdigit() else int(t)
        except (ValueError, OverflowError):
            return None
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            return None
        value = int(value)
    if not isinstance(value, int) or value <= 0 or value > _BOUNDS[field]:
        return None
    return value


def literal(expr: str) -> Any:
    """The value of a literal expression's source text (`32`, `1e5`, `int(1e5)`, `4 * 8`); None otherwise."""
    if len(expr) > 40:
        return None
    from schedmate.codeprof.pyast import const_eval

    try:
        node = ast.parse(expr.strip(), mode="eval").body
    except SyntaxError:
        return None
    ok, v = const_eval(node)
    return v if ok else None


def make(name: str, value: Any, where: str, how: str, rank: int, field: str | None = None) -> Candidate | None:
    f = field or field_of(name)
    if f is None:
        return None
    v = as_count(value, f)
    return None if v is None else Candidate(f, v, where, name, how, rank)


def first_line(text: str, key: str) -> int:
    """1-based line of the first `key:` / `key =` / `"key":` in `text` (1 when not found)."""
    m = re.search(rf"(?m)^[^#\n]*?[\"']?\b{re.escape(key)}\b[\"']?\s*[:=]", text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


def flatten(data: Any, prefix: str = "", depth: int = 0) -> Iterable[tuple[str, Any]]:
    if depth > 8:
        return
    if isinstance(data, dict):
        for k, v in data.items():
            yield from flatten(v, f"{prefix}.{k}" if prefix else str(k), depth + 1)
    elif not isinstance(data, (list, tuple, set)):
        yield prefix, data


def unique(cands: Iterable[Candidate]) -> list[Candidate]:
    seen: set[tuple[str, int, str, str]] = set()
    out: list[Candidate] = []
    for c in cands:
        k = (c.field, c.value, c.where, c.name.lower())
        if k not in seen:
            seen.add(k)
            out.append(c)
    return out


# --- collection ---------------------------------------------------------------------------------------------

_CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini")
_SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".zsh", ".job", ".pbs", ".lsf", ".qsub")
_FLAG = re.compile(r"(?<![\w-])--?([A-Za-z][\w.-]*)(?:=|\s+)[\"']?(\d[\d_]*(?:\.\d+)?(?:[eE]\+?\d+)?)[\"']?(?![\w.$-])")
_SHELL_VAR = re.compile(r"^\s*(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_]\w*)="
                        r"[\"']?(\d[\d_]*(?:\.\d+)?(?:[eE]\+?\d+)?)[\"']?\s*(?:[;#].*)?$")


def from_command(command: str) -> list[Candidate]:
    """`--flag value` / `--flag=value` / `VAR=value` in the launch command itself (rank CMD)."""
    out = [make(m.group(1), m.group(2), "cmd", "flag", CMD) for m in _FLAG.finditer(command)]
    out += [make(m.group(1), m.group(2), "cmd", "shell", CMD)
            for m in re.finditer(r"(?:^|\s)([A-Za-z_]\w*)=(\d+)(?=\s)", command)]
    return [c for c in out if c is not None]


def from_shell(rel: str, text: str) -> list[Candidate]:
    """Flags and variables of a launch or wrapper script the command runs (comment lines skipped)."""
    out: list[Candidate | None] = []
    for i, line in enumerate(text.splitlines()[:5000], 1):
        s = line.strip()
        if not s or s.startswith("#") and not s.startswith("#SBATCH"):
            continue
        where = f"{rel}:{i}"
        if m := _SHELL_VAR.match(s):
            out.append(make(m.group(1), m.group(2), where, "shell", CMD))
            continue
        out += [make(m.group(1), m.group(2), where, "flag", CMD) for m in _FLAG.finditer(s)]
    return [c for c in out if c is not None]


def from_config(rel: str, text: str) -> list[Candidate]:
    """Every nested key of a config file (YAML, JSON, TOML, INI) with a whole-number value."""
    from schedmate.codeprof.config_tree import parse_any

    try:
        data = parse_any(rel, text)
    except Exception:  # noqa: BLE001 - a config the parser rejects gives no candidates; the static pass says why
        return []
    out: list[Candidate | None] = []
    for k, v in flatten(data):
        if (f := field_of(k)) is not None and as_count(v, f) is not None:
            out.append(make(k, v, f"{rel}:{first_line(text, k.rsplit('.', 1)[-1])}", "config", CONFIG_FILE, f))
    return [c for c in out if c is not None]


def from_python(rel: str, summary: dict[str, Any], text: str | None, entry: bool = True) -> list[Candidate]:
    """Literal assignments, call keywords, argparse/absl and dataclass defaults, function keyword defaults."""
    out: list[Candidate | None] = []
    skip = range_start_offsets(text) if text is not None else {}  # `range(1, N)` runs N - 1 times
    for a in summary.get("assigns", []):
        if a.get("op") is None:
            v = literal(a["expr"])
            v = v - skip[a["target"]] if type(v) is int and a["target"] in skip else v
            out.append(make(a["target"], v, f"{rel}:{a['line']}", "assign", CODE))
    for c in summary.get("calls", []):
        for k, expr in c.get("kwargs", {}).items():
            if k != "default" and not feeds_evaluation(c):  # `DataLoader(val_set, batch_size=1)`
                out.append(make(k, literal(expr), f"{rel}:{c['line']}", "keyword", CODE))
    for a in summary.get("argparse", []):
        if a.get("has_default"):
            out.append(make(a["dest"], a.get("default"), f"{rel}:{a['line']}", "default", DEFAULT))
    for fields in summary.get("dataclasses", {}).values():
        for f in fields:
            if f.get("has_default"):
                out.append(make(f["name"], f.get("default"), f"{rel}:{f['line']}", "default", DEFAULT))
    if text is not None and entry:  # a helper's keyword default (`def conv(x, batch_size=1)`) is no setting
        out += _function_defaults(rel, text)
    return [c for c in out if c is not None]


def _function_defaults(rel: str, text: str) -> list[Candidate | None]:
    """`def train(epochs=90, batch_size=256):` and `__init__` keyword defaults."""
    from schedmate.codeprof.pyast import const_eval, default_pairs

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    out: list[Candidate | None] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for arg, d in default_pairs(node.args):
            ok, v = const_eval(d)
            if ok:
                out.append(make(arg.arg, v, f"{rel}:{d.lineno}", "default", DEFAULT))
    return out


def from_params(params: Any) -> list[Candidate]:
    """The static pass's own layered settings (it evaluated the command line into them)."""
    out: list[Candidate | None] = []
    for key, pv in params.items():
        rank = _LAYER_RANK.get(pv.layer, DEFAULT)
        if pv.layer == 0:  # a library's default is the library's, not a number the job states
            continue
        where = pv.where[0] if pv.where else "?"
        rank = CMD if where == "cmd" else rank
        c = make(key, pv.value, where, "params", rank)
        if c is None and (f := field_of(key)) is not None and not isinstance(pv.value, dict | list | tuple | set):
            c = Candidate(f, UNKNOWN, where, key, "params", rank)  # set, but to nothing countable
        out.append(c)
    return [c for c in out if c is not None]


# a Python module that holds settings (`conf/vla.py`, `hparams.py`, `options.py`), not a library's code
_SETTINGS_MODULE = re.compile(r"(^|[/_.-])(conf|config|configs|cfg|hparams?|hyperparams?|args|arguments|options?|opts|"
                              r"settings?|params|defaults?|flags|experiments?|exps?|recipes?)([/_.-]|$)", re.IGNORECASE)


def settings_file(rel: str, res: Any) -> bool:
    """Whether a Python file's numbers are settings of this job: the entry script, a config the pass applied,
    or a module named as a settings module (a helper library's own defaults are not the job's)."""
    return rel == res.entry or rel in res.configs or bool(_SETTINGS_MODULE.search(rel.rsplit(".", 1)[0]))


def collect(res: Any, wd: Any, command: str) -> list[Candidate]:
    """Every candidate in what the static pass reached: its settings, the command, and the files it read."""
    cands = from_params(res.params) + from_command(command)
    for rel, summary in res.py.items():
        if not settings_file(rel, res):
            continue
        cands += from_python(rel, summary, wd.read_text(rel) if rel in wd.hashes else None, rel == res.entry)
    for rel in sorted(wd.hashes):
        if rel in res.py:
            continue
        text = wd.read_text(rel)
        if text is None:
            continue
        low = rel.lower()
        if low.endswith(_CONFIG_SUFFIXES):
            cands += from_config(rel, text)
        elif low.endswith(_SHELL_SUFFIXES) or "." not in rel.rsplit("/", 1)[-1] or text.startswith("#!"):
            cands += from_shell(rel, text)
    return unique(cands)


# --- decision -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fill:
    field: str
    value: int
    chosen: Candidate
    others: int
    """candidates of the winning tier that agree (the chosen one included)"""

    def warning(self) -> str:
        c = self.chosen
        return (f"{self.field}: {self.value} read from a candidate named {c.name!r} ({c.where}, {c.how}); "
                f"a name match, weaker than a derived fact")


# frameworks whose plain `batch_size` is the batch over all devices (the input pipeline is split across them)
GLOBAL_BATCH_FRAMEWORKS = {"jax", "tensorflow"}


def plain_batch(name: str) -> bool:
    """A batch setting named without saying per-device or global (`batch_size`, `train.bs`)."""
    leaf = re.split(r"[.\[\]]", name.strip().lstrip("-$"))[-1]
    return not set(tokens(leaf)) & (_PER_DEVICE | _GLOBAL | {"samples", "imgs", "images", "videos"})


def decide(cands: Iterable[Candidate], have: set[str], framework: str | None = None) -> list[Fill]:
    """For each field not in `have`, the value of its highest-precedence candidates when they all agree.

    Run length: epochs are not filled when the steps are known, nor steps when the epochs are (a job states one;
    the other is then null by design). Batch: the per-device batch is not filled when the global one is known,
    nor the global when the per-device one is (the other then depends on the GPU count, which derivation
    already used when it could). In JAX and TensorFlow jobs a plain `batch_size` is the global batch."""
    by_field: dict[str, list[Candidate]] = {}
    for c in cands:
        if framework in GLOBAL_BATCH_FRAMEWORKS and c.field == "micro_batch_size" and plain_batch(c.name):
            c = Candidate("global_batch_size", c.value, c.where, c.name, c.how, c.rank)
        by_field.setdefault(c.field, []).append(c)
    out: list[Fill] = []
    for f in FIELDS:
        if f in have or f not in by_field:
            continue
        if f == "epochs" and "train_steps" in have or f == "train_steps" and "epochs" in have:
            continue
        if f == "micro_batch_size" and "global_batch_size" in have or \
                f == "global_batch_size" and "micro_batch_size" in have:
            continue
        cs = by_field[f]
        top = max(c.rank for c in cs)
        tier = [c for c in cs if c.rank == top]
        values = {c.value for c in tier}
        if len(values) == 1 and UNKNOWN not in values:
            out.append(Fill(f, tier[0].value, tier[0], len(tier)))
    return out
