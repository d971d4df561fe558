"""The global batch of a one-process job that feeds every GPU from one loader (DataParallel, TF towers)."""

from __future__ import annotations

import re
from typing import Any

from schedmate.codeprof.static.eval_helpers import evaluation_helper


def loader_global(sp: Any, accum: int, accum_where: list[str]) -> None:
    """One process feeds every GPU: its loader's batch is what all GPUs see per forward/backward pass, so the
    samples per optimizer step are that batch times the accumulation (Caffe `iter_size`, a `grad_accum`
    setting). Called once the accumulation is known; a stated global batch read later still wins."""
    got = getattr(sp, "_loader_global", None)
    if got is None or accum <= 1:
        return
    value, where = got
    sp.r.put("global_batch_size", value * accum, [*where, *accum_where])


_EVAL_WORDS = {"eval", "evaluation", "val", "valid", "validation", "test", "testing", "dev", "infer", "inference"}


def feeds_evaluation(call: dict[str, Any]) -> bool:
    """True when a call's positional arguments name an evaluation split (`DataLoader(eval_dataset,
    batch_size=1)`, `make_loader(cfg.data.val, ...)`): its keywords (the batch size) are the evaluation's, not
    the training's."""
    for arg in call.get("args", []):
        words = {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(arg)).lower()) if w}
        if words & _EVAL_WORDS:
            return True
    return False


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()) if w}


def assigned_to_evaluation(summary: dict[str, Any] | None, call: dict[str, Any]) -> bool:
    """True when the call's result is bound to an evaluation name on its line (`test_loader =
    DataLoader(dataset, batch_size=1)`): a loader built for evaluation, whatever dataset it reads."""
    for a in (summary or {}).get("assigns", []):
        if a["line"] == call["line"] and a["expr"].lstrip().startswith(call["func"]):
            return bool(_words(a["target"].rsplit(".", 1)[-1]) & _EVAL_WORDS)
    return False


# words of a function or a binding that builds a loader for something other than training: dataset statistics
# (`get_mean_and_std`), pictures (`dataloader_vis`), plots, renders, demos
_SIDE_WORDS = {"vis", "viz", "visual", "visualize", "visualise", "visualization", "visualisation", "plot", "render",
               "demo", "debug", "mean", "std", "stats", "statistics", "norm", "normalization", "calib", "calibrate",
               "calibration", "preview"}


def _enclosing_function(summary: dict[str, Any] | None, line: int) -> str | None:
    """The name of the innermost function of the file around `line`, None at module level."""
    inner = None
    for f in (summary or {}).get("functions", []):
        if f["line"] <= line <= (f.get("end") or f["line"]) and (inner is None or f["line"] >= inner["line"]):
            inner = f
    return inner["name"] if inner is not None else None


def built_for_side_use(summary: dict[str, Any] | None, call: dict[str, Any]) -> bool:
    """True when a loader is built inside a function named for a side computation (`def get_mean_and_std(ds):
    DataLoader(ds, batch_size=1)`) or bound to a name that says so (`self.dataloader_vis = cycle(DataLoader(...,
    batch_size=1))`): it never feeds the training steps, whatever dataset it reads."""
    fn = _enclosing_function(summary, call["line"])
    if fn is not None and _words(fn) & _SIDE_WORDS:
        return True
    for a in (summary or {}).get("assigns", []):
        if a["line"] == call["line"] and f"{call['func']}(" in a["expr"]:
            return bool(_words(a["target"].rsplit(".", 1)[-1]) & (_SIDE_WORDS | _EVAL_WORDS))
    return False


# an `if` test that asks whether the loader is for training: `if train:`, `if self.is_train:`,
# `if mode == "train":` (the else branch builds the evaluation loader)
_TRAIN_FLAG = re.compile(r"""(?:[\w.]*\.)?(?:is_)?train(?:ing)?|[\w.]+\s*==\s*['"]train(?:ing)?['"]""")


def training_branch(call: dict[str, Any]) -> bool | None:
    """True when the loader is built under a training flag's `if` (`if train: DataLoader(...)`), False in its
    else branch (`else: DataLoader(..., batch_size=1)`, an evaluation loader), None when no such test guards
    it."""
    for cond in call.get("when") or []:
        text = cond.strip()
        negated = 0
        while True:
            m = re.fullmatch(r"not\s*\((.*)\)|not\s+(.*)", text, re.DOTALL)
            if m is None:
                break
            text, negated = (m.group(1) or m.group(2)).strip(), negated + 1
        if _TRAIN_FLAG.fullmatch(text):
            return negated % 2 == 0
    return None


def with_training_branches(active: list[tuple[str, dict[str, Any]]],
                           calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """`active` plus the loaders built under a helper's own training flag (`def make_loader(cfg, train): if
    train: return DataLoader(...)`), whatever value a same-named setting elsewhere gives that parameter: the
    helper is called once per split, so its training branch runs."""
    seen = {(rel, c["line"]) for rel, c in active}
    extra = [(rel, c) for rel, c in calls
             if c["func"].rsplit(".", 1)[-1] == "DataLoader" and (rel, c["line"]) not in seen
             and training_branch(c) and any(re.fullmatch(r"(?:is_)?train(?:ing)?", w.strip())
                                            for w in c.get("when") or [])]
    return active + extra


def training_loaders(loaders: list[tuple[str, dict[str, Any]]],
                     summaries: dict[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The loaders that feed training: those reading a training split, else those not built for evaluation,
    else all of them; never one built for a side computation (statistics, pictures)."""
    loaders = [rc for rc in loaders if not built_for_side_use(summaries.get(rc[0]), rc[1])]
    loaders = [rc for rc in loaders if training_branch(rc[1]) is not False] or loaders
    flagged = [rc for rc in loaders if training_branch(rc[1])]
    if flagged:
        return flagged
    train = [rc for rc in loaders if "train" in " ".join([*rc[1]["args"][:1], rc[1]["kwargs"].get("dataset", "")])]
    if train:
        return train
    rest = [rc for rc in loaders
            if not feeds_evaluation(rc[1]) and not assigned_to_evaluation(summaries.get(rc[0]), rc[1])
            and not evaluation_helper(_enclosing_function(summaries.get(rc[0]), rc[1]["line"]))]
    return rest or loaders


def loader_batch_expr(call: dict[str, Any], summary: dict[str, Any] | None) -> str | None:
    """The batch expression of a loader call: its `batch_size` keyword, or torch's `DataLoader(dataset, 64)`
    second positional argument (`batch_size` is torch's second parameter)."""
    if "batch_size" in call["kwargs"]:
        return str(call["kwargs"]["batch_size"])
    args = call.get("args", [])
    if len(args) < 2 or call.get("spread"):
        return None
    imports = set((summary or {}).get("imports", []))
    func = call["func"]
    torch_loader = func in {"torch.utils.data.DataLoader", "data.DataLoader"} and (
        "torch" in imports or "torch.utils.data" in imports or func.startswith("torch.")
    ) or (func == "DataLoader" and "torch.utils.data.DataLoader" in imports)
    return str(args[1]) if torch_loader else None
