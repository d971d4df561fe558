"""The README table reader both README-size readers share (`schedmate/codeprof/readme_tables.py`)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.reader import Workdir
from schedmate.codeprof.readme_tables import cells, count_cell, readmes_up_from, tables


def test_markdown_tables_are_read_with_or_without_outer_pipes_and_short_separators() -> None:
    text = "intro\n\nA | B\n--- |:-:\nx | 1\ny | 2\n\n| C | D |\n| :-: | -- |\n| z | 3 |\n"
    got = tables(text)
    assert [t.header for t in got] == [["A", "B"], ["C", "D"]]
    assert got[0].rows == [(5, ["x", "1"]), (6, ["y", "2"])] and got[1].rows == [(10, ["z", "3"])]


def test_one_border_pipe_is_markup_and_a_doubled_one_is_an_empty_cell() -> None:
    assert cells("| a | b |") == ["a", "b"]
    assert cells("|| a | b |") == ["", "a", "b"]


def test_the_params_column_is_found_through_markup_and_must_be_the_only_whole_model_one() -> None:
    bold = tables("| Model | **#Params (M)** | Top-1 |\n|---|---|---|\n| reef_s | 12.5 | 80.1 |\n")[0]
    assert bold.params_column == 1
    tunable = tables("| Model | Params | Tunable params |\n|---|---|---|\n| reef_s | 86 | 0.3 |\n")[0]
    assert tunable.params_column == 1
    two = tables("| Model | Params | Params (EMA) |\n|---|---|---|\n| reef_s | 86 | 86 |\n")[0]
    assert two.params_column is None


def test_counts_are_millions_unless_the_cell_or_the_header_names_a_unit() -> None:
    assert count_cell("12.5", "Params") == 12_500_000
    assert count_cell("**1.3B**", "Params") == 1_300_000_000
    assert count_cell("340", "Params (K)") == 340_000
    assert count_cell("1,024", "#Params (K)") == 1_024_000
    assert count_cell("-", "Params") is None and count_cell("0.001", "Params") is None


def test_readmes_are_listed_from_the_nearest_folder_up_to_the_root(tmp_path: Path) -> None:
    (tmp_path / "cfgs" / "reef").mkdir(parents=True)
    (tmp_path / "README.md").write_text("root\n")
    (tmp_path / "cfgs" / "reef" / "README_en.md").write_text("near\n")
    (tmp_path / "cfgs" / "reef" / "net.py").write_text("x = 1\n")
    wd = Workdir(tmp_path)
    assert readmes_up_from("cfgs/reef/net.py", wd) == ["cfgs/reef/README_en.md", "README.md"]
    assert readmes_up_from(None, wd) == ["README.md"]
