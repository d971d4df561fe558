"""The main table side by side at several semantic-noise scales (BENCHMARKS.md, "Under calibrated semantic noise").

    python -m eval.main.noise_table eval/main/results_noise0 eval/main/results_noise1 eval/main/results_noise2

Each directory is one `python -m eval.main.run` output (results.csv) at one `--semantic-noise` scale, in
the order given. Prints one markdown row per (trace, policy): average JCT without semantics (`none`) and with
perfect knowledge (`oracle`), which the noise does not touch (checked: they must agree across the runs),
then `schedmate`'s average JCT, its speed-up over `none` and its ratio to `oracle` at each scale.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import pandas as pd


def side_by_side(dirs: list[Path]) -> str:
    tables = [pd.read_csv(d / "results.csv").set_index(["trace", "policy", "annotator"])["avg_jct_h"] for d in dirs]
    first = tables[0]
    for d, t in zip(dirs[1:], tables[1:], strict=True):
        for ann in ("none", "oracle"):
            a, b = first.xs(ann, level="annotator"), t.xs(ann, level="annotator")
            common = a.index.intersection(b.index)
            if not all(math.isclose(a[i], b[i], rel_tol=1e-9) for i in common):
                raise ValueError(f"{d}: `{ann}` differs from {dirs[0]}: the runs are not of the same jobs")
    names = [d.name for d in dirs]
    head = (["trace", "policy", "none", "oracle"] + [f"schedmate {n}" for n in names]
            + [f"vs none {n}" for n in names] + [f"/ oracle {n}" for n in names])
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    keys = sorted({(tr, po) for tr, po, _ in first.index})
    for tr, po in keys:
        none, orc = first[(tr, po, "none")], first[(tr, po, "oracle")]
        sm = [t.get((tr, po, "schedmate"), math.nan) for t in tables]
        cells = [tr, po, f"{none:.2f}", f"{orc:.2f}"] + [f"{x:.2f}" for x in sm]
        cells += [f"{none / x:.2f}x" for x in sm] + [f"{x / orc:.2f}" for x in sm]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", type=Path)
    print(side_by_side(ap.parse_args().dirs))


if __name__ == "__main__":
    main()
