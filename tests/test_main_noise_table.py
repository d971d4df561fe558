"""eval/main/noise_table.py: the main table side by side at several semantic-noise scales."""

from __future__ import annotations

import pytest

from eval.main.noise_table import side_by_side

HEAD = "trace,policy,annotator,avg_jct_h\n"


def write(d, schedmate_h, none_h=10.0):
    d.mkdir()
    (d / "results.csv").write_text(HEAD + f"t,fifo,none,{none_h}\nt,fifo,oracle,4.0\nt,fifo,schedmate,{schedmate_h}\n")
    return d


def test_each_scale_gets_its_schedmate_jct_speedup_and_oracle_ratio(tmp_path):
    table = side_by_side([write(tmp_path / "k0", 5.0), write(tmp_path / "k1", 8.0)])
    assert "| t | fifo | 10.00 | 4.00 | 5.00 | 8.00 | 2.00x | 1.25x | 1.25 | 2.00 |" in table


def test_runs_whose_none_rows_differ_are_refused(tmp_path):
    with pytest.raises(ValueError, match="not of the same jobs"):
        side_by_side([write(tmp_path / "k0", 5.0), write(tmp_path / "k1", 8.0, none_h=11.0)])
