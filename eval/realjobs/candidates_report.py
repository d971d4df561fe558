"""How much of what the static pass leaves null is among the job's named numeric candidates (dev half only).

    python -m eval.realjobs.candidates_report --cache /work/rjcache-x          # the opportunity, per field
    python -m eval.realjobs.candidates_report --cache /work/rjcache-x --items  # one line per dev field

For every dev item the analyzer runs WITHOUT the candidate pass; for each field (params excluded) it reports:
`null_with_label` (the pass answers null, the label has a value), `recall` (the label is among the candidates
of the files the pass reached), `recall_any` (among candidates of any file of the source tree, reached or not:
the ceiling of a wider search), `one_value` (exactly one distinct value among the reached candidates),
`label_null_cands` (the label is null but reached candidates exist: the false-positive risk), and what the
decision rule (`schedmate.codeprof.candidates.decide`) would do: right fills, wrong fills, fills where the
label is null, and its net (right - wrong - on-null). The test half is refused: its items are never looked at
one by one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from eval.realjobs.corpus import load_code_items, split_of
from eval.realjobs.rebuild import default_out
from eval.realjobs.run import field_right, job_of, load_index

FIELDS = ("global_batch_size", "micro_batch_size", "num_gpus", "train_steps", "epochs")
_MAX_UNREACHED = 60


def unreached(wd_root: Path, reached: set[str]) -> list[Any]:
    """Candidates of the source tree's files the pass did not read (a fresh reader: `files_read` untouched)."""
    from schedmate.codeprof import candidates as C
    from schedmate.codeprof.pyast import analyze_python
    from schedmate.codeprof.reader import Workdir

    wd = Workdir(wd_root)
    out: list[Any] = []
    n = 0
    for rel in wd.list_files():
        if rel in reached or n >= _MAX_UNREACHED:
            continue
        low = rel.lower()
        if not low.endswith((".py", *C._CONFIG_SUFFIXES, *C._SHELL_SUFFIXES)):
            continue
        text = wd.read_text(rel)
        if text is None:
            continue
        n += 1
        if low.endswith(".py"):
            try:
                out += C.from_python(rel, analyze_python(text), text)
            except (SyntaxError, ValueError, RecursionError):
                continue
        elif low.endswith(C._CONFIG_SUFFIXES):
            out += C.from_config(rel, text)
        else:
            out += C.from_shell(rel, text)
    return out


def item_rows(entry: dict[str, Any], labels: dict[str, Any], item_id: str, wide: bool) -> list[dict[str, Any]]:
    from schedmate.codeprof import candidates as C
    from schedmate.codeprof.analyzer import finish, static_profile

    workdir, command = job_of(entry, "root")
    res, wd = static_profile(workdir, command, dict(entry.get("env") or {}))
    prof = finish(dict(res.facts), res, wd, [], candidates=False)
    got = {f: prof.value(f) for f in FIELDS}
    cands = C.collect(res, wd, command)
    have = {f for f in FIELDS if got[f] is not None}
    fills = {x.field: x for x in C.decide(cands, have, prof.value("framework"))}
    wider = unreached(wd.root, set(wd.hashes)) if wide else []
    rows = []
    for f in FIELDS:
        want = labels.get(f)
        mine = [c for c in cands if c.field == f]
        fill = fills.get(f)
        rows.append({
            "id": item_id, "field": f, "label": want, "static": got[f],
            "null_with_label": got[f] is None and want is not None,
            "static_null": got[f] is None,
            "n_cands": len(mine), "values": sorted({c.value for c in mine})[:8],
            "in_cands": want is not None and any(field_right(f, c.value, want) for c in mine),
            "in_any": want is not None and any(field_right(f, c.value, want) for c in [*mine, *wider]
                                               if c.field == f),
            "one_value": len({c.value for c in mine}) == 1,
            "fill": None if fill is None else fill.value,
            "fill_from": None if fill is None else f"{fill.chosen.name}@{fill.chosen.where}",
            "fill_right": fill is not None and field_right(f, fill.value, want),
        })
    return rows


def report(df: pd.DataFrame) -> pd.DataFrame:
    nl = df[df["null_with_label"]]
    sn = df[df["static_null"]]
    rows = []
    for f in FIELDS:
        a, s = nl[nl["field"] == f], sn[sn["field"] == f]
        filled = s[s["fill"].notna()]
        right = int(filled["fill_right"].sum())
        on_null = int(filled["label"].isna().sum())
        wrong = len(filled) - right - on_null
        rows.append({"field": f, "null_with_label": len(a), "recall": int(a["in_cands"].sum()),
                     "recall_any": int(a["in_any"].sum()),
                     "one_value": int((a["one_value"] & (a["n_cands"] > 0)).sum()),
                     "label_null_cands": int(((s["label"].isna()) & (s["n_cands"] > 0)).sum()),
                     "fills": len(filled), "right": right, "wrong": wrong, "on_null": on_null,
                     "net": right - wrong - on_null})
    out = pd.DataFrame(rows).set_index("field")
    out.loc["all"] = out.sum()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--split", default="dev", help="dev only (the test half is never looked at item by item)")
    ap.add_argument("--cache", type=Path, default=default_out(), help="the rebuilt corpus (rebuild.py --out)")
    ap.add_argument("--only", help="items whose id contains this text")
    ap.add_argument("--items", action="store_true", help="one line per dev field the pass leaves null")
    ap.add_argument("--no-wide", action="store_true", help="skip the search of files the pass did not read")
    a = ap.parse_args(argv)
    if a.split != "dev":
        print(f"error: --split {a.split}: this report lists items one by one, so it runs on the dev half only; "
              "score the test half in aggregate with `python -m eval.realjobs.run --split test`", file=sys.stderr)
        return 2
    index = load_index(a.cache)
    items = [it for it in load_code_items("dev") if it.id in index and split_of(it.origin.key) == "dev"]
    if a.only:
        items = [it for it in items if a.only in it.id]
    rows: list[dict[str, Any]] = []
    for it in items:
        try:
            rows += item_rows(index[it.id], it.labels, it.id, not a.no_wide)
        except Exception as e:  # noqa: BLE001 - one bad job must not stop the report; it is named
            print(f"{it.id}: {type(e).__name__}: {e}", file=sys.stderr)
    df = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    pd.set_option("display.max_colwidth", 60)
    print(f"## candidates on the dev half ({df['id'].nunique()} jobs)\n")
    print(report(df).to_string())
    if a.items:
        show = df[df["static_null"] & (df["n_cands"] > 0) | df["null_with_label"]]
        print(show[["id", "field", "label", "n_cands", "values", "in_cands", "in_any", "fill", "fill_from"]]
              .to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
