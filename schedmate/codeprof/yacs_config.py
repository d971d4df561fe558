"""How yacs-style config objects take the command line (read, never run).

A yacs job (`_C = CN(); _C.SOLVER.IMS_PER_BATCH = 16` defaults, a YAML given with `--cfg`/`--config-file`, then
`opts`) reaches its final config in three documented steps, each of which the static pass follows:

1. `cfg.merge_from_file(args.cfg)`: the YAML (and its `_BASE_` chain) over the defaults (`config_tree.py`);
2. `cfg.merge_from_list(args.opts)`: the trailing `KEY VALUE` pairs of the positional `opts` argument
   (`parser.add_argument("opts", nargs=argparse.REMAINDER)`). yacs keys are the config's own attribute
   names, so a repository whose fields are lower case (`TRAIN.num_epoch 10`, `train.batch_size 64`) is as
   valid as detectron2's `SOLVER.MAX_ITER 90000`: `opts_key` accepts them when the script declares `opts`;
3. named flags copied into fields by the repository's `update_config(config, args)`
   (`if args.batch_size: config.DATA.BATCH_SIZE = args.batch_size`, Swin-Transformer and its many copies):
   `flags_into_fields` finds these copies so a flag given on the command line sets the field it feeds; a copy
   no `if` guards (`config.train_epochs = args.epoch`) also carries the flag's default over the field's own.
"""

from __future__ import annotations

import re
from typing import Any

STRICT_KEY = re.compile(r"[A-Z][A-Z0-9_]*(\.[A-Z][A-Z0-9_]*)+")
"""an upper-case dotted key (`SOLVER.IMS_PER_BATCH`): a yacs override wherever it stands"""
_LOOSE_KEY = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")
"""`TRAIN.num_epoch`, `train.batch_size`: a dotted key in any case (only where the script declares `opts`)"""
_FILE_TAIL = re.compile(r"\.(md|txt|ya?ml|json|py|sh|cfg|toml|gin|pth|pt|ckpt|csv|log)$", re.IGNORECASE)
# the object a flag is read from (`args.batch_size`, `opt.epochs`, `FLAGS.steps`)
_FLAG_READ = re.compile(r"(?:args|opt|opts|option|options|flags|FLAGS|cmd_args|cli_args|parsed_args|hparams)\.(\w+)")
_CONFIG_ROOT = re.compile(r"_?(C|cfg|config|conf|cfg_node|hparams|hp)$", re.IGNORECASE)


def declares_opts(summaries: list[dict[str, Any]]) -> bool:
    """Whether a script declares yacs' positional `opts` (the overrides merged with `merge_from_list`): a
    positional named `opts`, or any positional taking the rest of the command line (`nargs=argparse.REMAINDER`,
    `options` in some repositories)."""
    for s in summaries:
        for c in s.get("calls", []):
            if not c["func"].endswith("add_argument") or not c["args"]:
                continue
            name = c["args"][0].strip("'\"")
            if not name.startswith("-") and (name == "opts" or "REMAINDER" in c["kwargs"].get("nargs", "")):
                return True
    return False


def opts_key(token: str, loose: bool) -> bool:
    """A `KEY` of a yacs `KEY VALUE` override; lower-case fields only when the script declares `opts`."""
    if STRICT_KEY.fullmatch(token):
        return True
    return loose and bool(_LOOSE_KEY.fullmatch(token)) and not _FILE_TAIL.search(token)


def flags_into_fields(py: dict[str, dict[str, Any]]) -> list[tuple[str, str, str, bool]]:
    """(config field without its root, flag dest, file:line, unconditional) for every `cfg.SECTION.FIELD =
    args.flag` in a function (the `update_config(config, args)` idiom); a field fed by two different flags is
    left out. `unconditional` is True when no `if` guards the copy (`config.train_epochs = args.epoch`)."""
    out: dict[str, tuple[str, str, bool]] = {}
    dropped: set[str] = set()
    for rel, s in py.items():
        for a in s.get("assigns", []):
            if a.get("op") is not None or a.get("depth", 0) < 1:
                continue
            m = _FLAG_READ.fullmatch(a["expr"].strip())
            parts = a["target"].split(".")
            if not m or len(parts) < 2 or parts[0] in {"self", "args", "opt", "FLAGS"}:
                continue
            if len(parts) == 2 and not _CONFIG_ROOT.match(parts[0]):
                continue  # `model.lr = args.lr` on some object: not a config's field
            field = ".".join(parts[1:])
            if field in out and out[field][0] != m.group(1):
                dropped.add(field)
            out[field] = (m.group(1), f"{rel}:{a['line']}", not a.get("when"))
    return [(f, dest, where, always) for f, (dest, where, always) in out.items() if f not in dropped]
