"""Modules fit in a head: no Python module under `schedmate/`, `adapters/` or `eval/` is longer than
`MAX_LINES`, except the job scripts of the code dataset (data for the analyzers), files marked as data
tables (a line `# data table` among their first lines) and the modules other work is splitting right now."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOTS = ("schedmate", "adapters", "eval")
MAX_LINES = 500
HEADER_LINES = 10
"""A `# data table` marker counts among this many first lines."""
JOB_DATA = ("eval/datasets/code/jobs",)
"""Job scripts written as data for the code analyzer (see eval/datasets/code/README.md)."""

BEING_SPLIT: set[str] = set()
"""Modules other helpers are splitting now; remove an entry when its split lands (the list only shrinks)."""


def is_data_table(text: str) -> bool:
    return any(line.strip().lower().startswith("# data table") for line in text.splitlines()[:HEADER_LINES])


def too_long(root: Path = ROOT, roots: tuple[str, ...] = ROOTS, limit: int = MAX_LINES) -> dict[str, int]:
    """Modules over `limit` lines (relative path -> lines), data tables and job data left out."""
    out: dict[str, int] = {}
    for top in roots:
        for p in sorted((root / top).rglob("*.py")):
            rel = p.relative_to(root).as_posix()
            if rel.startswith(JOB_DATA) or "/.venv/" in f"/{rel}":
                continue
            text = p.read_text(encoding="utf-8", errors="replace")
            n = len(text.splitlines())
            if n > limit and not is_data_table(text):
                out[rel] = n
    return out


def test_no_module_is_longer_than_the_limit_unless_it_is_being_split():
    over = {rel: n for rel, n in too_long().items() if rel not in BEING_SPLIT}
    assert over == {}, f"modules over {MAX_LINES} lines (split them along their seams): {over}"


def test_the_allow_list_holds_only_modules_still_over_the_limit():
    over = too_long()
    done = sorted(rel for rel in BEING_SPLIT if rel not in over)
    assert done == [], f"split, moved or short enough now: remove from BEING_SPLIT: {done}"


def test_a_module_that_grows_past_the_limit_is_reported(tmp_path):
    pkg = tmp_path / "schedmate" / "grown"
    pkg.mkdir(parents=True)
    (pkg / "fits.py").write_text("x = 1\n" * MAX_LINES)
    (pkg / "grown.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (pkg / "table.py").write_text('"""Rates."""\n# data table\n' + "x = 1\n" * (3 * MAX_LINES))
    jobs = tmp_path / "eval" / "datasets" / "code" / "jobs" / "big_job"
    jobs.mkdir(parents=True)
    (jobs / "train.py").write_text("x = 1\n" * (2 * MAX_LINES))
    assert too_long(tmp_path, ("schedmate", "eval")) == {"schedmate/grown/grown.py": MAX_LINES + 1}


def test_a_data_table_marker_below_the_header_does_not_count():
    text = "x = 1\n" * HEADER_LINES + "# data table\n"
    assert not is_data_table(text)
    assert is_data_table('"""Known model sizes."""\n\n# data table: one row per model\n')
