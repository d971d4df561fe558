"""Label audit: the corpus labels against labels re-derived blind, field by field.

    python -m eval.realjobs.label_audit                     # every audit under eval/realjobs/audit/
    python -m eval.realjobs.label_audit --list              # also print each disagreement

An audit file (`audit/<date>_<split>_<code|logs>_blind.jsonl`) holds, per item, labels written by someone
who read the sources and the README's conventions but neither the corpus labels nor any analyzer output
(`{"id", "labels", "null_why", "how_derived", "confidence"}`). Agreement uses the scorers' own tests
(params within 1.5x, iteration time within 20 %, the rest exactly; null agrees only with null), so a
disagreement is one the analyzer's score could feel. Disagreements are settled by reading the sources
again, never by looking at what the analyzer answers; the settled changes go into the shards with
"label audit <date>" in their `how_derived` (README, "Label audit").
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval.realjobs.corpus import load_code_items, load_log_items
from eval.realjobs.run import field_right
from eval.realjobs.run_logs import _same_number, _within

AUDIT_DIR = Path(__file__).parent / "audit"
CODE_FIELDS = ("params", "global_batch_size", "micro_batch_size", "num_gpus", "train_steps", "epochs")
LOG_FIELDS = ("category", "failed", "current_step", "total_steps", "iteration_time_s")


@dataclass(frozen=True)
class Disagreement:
    item_id: str
    field: str
    corpus: Any
    blind: Any
    confidence: str | None


def agree(field: str, corpus: Any, blind: Any) -> bool:
    """Whether a blind label and the corpus label count as the same answer for the scorer."""
    if field == "iteration_time_s":
        return _within(blind, corpus)
    if field in ("category", "failed"):
        return corpus == blind
    if field in ("current_step", "total_steps"):
        return _same_number(blind, corpus)
    return field_right(field, blind, corpus)


def read_audit(path: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}:{n}: not JSON ({e.msg})") from e
        if not isinstance(row, dict) or "id" not in row or not isinstance(row.get("labels"), dict):
            raise ValueError(f"{path}:{n}: an audit row needs an id and a labels object")
        if row["id"] in rows:
            raise ValueError(f"{path}:{n}: {row['id']} audited twice")
        rows[row["id"]] = row
    return rows


def compare(path: Path) -> tuple[int, list[Disagreement]]:
    """(fields compared, disagreements) for one audit file; every audited id must be a corpus item."""
    kind = "logs" if path.stem.endswith("_logs_blind") else "code"
    items = {i.id: i for i in (load_log_items() if kind == "logs" else load_code_items())}
    fields = LOG_FIELDS if kind == "logs" else CODE_FIELDS
    compared, out = 0, []
    for item_id, row in read_audit(path).items():
        if item_id not in items:
            raise ValueError(f"{path.name}: {item_id} is not in the corpus")
        labels = items[item_id].labels
        for field in fields:
            compared += 1
            if not agree(field, labels.get(field), row["labels"].get(field)):
                conf = (row.get("confidence") or {}).get(field)
                out.append(Disagreement(item_id, field, labels.get(field), row["labels"].get(field), conf))
    return compared, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=AUDIT_DIR)
    ap.add_argument("--list", action="store_true", help="print each disagreement")
    args = ap.parse_args(argv)
    files = sorted(args.dir.glob("*_blind.jsonl"))
    if not files:
        print(f"no audit files (*_blind.jsonl) in {args.dir}")
        return 1
    for path in files:
        compared, dis = compare(path)
        print(f"{path.name}: {compared} fields, {compared - len(dis)} agree ({1 - len(dis) / compared:.3f}), "
              f"{len(dis)} disagree")
        for d in dis if args.list else []:
            print(f"  {d.item_id} {d.field}: corpus {d.corpus!r}, blind {d.blind!r}"
                  + (f" ({d.confidence} confidence)" if d.confidence else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
