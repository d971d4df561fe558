"""A sweep grid expands into cells with stable keys, and refuses what no cell could run, naming the field."""

from __future__ import annotations

from collections import deque
from pathlib import Path

import pytest

from schedmate.sweep import GridError, SweepGrid, load_grid, load_grids, sweep_cells
from schedmate.sweep.runner import _next_cell

ROOT = Path(__file__).resolve().parents[2]


def test_a_grid_has_one_cell_per_combination_with_a_distinct_key_each():
    grid = SweepGrid(traces=["synth:helios:50", {"spec": "default", "cluster": "32"}], policies=["fifo", "sjf"],
                     seeds=[0, 1], loads=[0.5, 1.0], clusters=["64", "128"])
    cells = grid.cells()
    # the default trace pins its cluster: 2 clusters x ... for helios, 1 for default
    assert len(cells) == 2 * 2 * 2 * 2 + 2 * 2 * 2
    assert len({c.key for c in cells}) == len(cells)
    assert {c.spec.cluster for c in cells if c.trace.spec == "default"} == {"32"}


def test_a_cell_key_is_the_same_in_every_expansion_and_changes_with_any_parameter():
    a = SweepGrid(traces=["synth:helios:50"], policies=["sjf"], seeds=[3]).cells()[0]
    again = SweepGrid(traces=["synth:helios:50"], policies=["sjf"], seeds=[3]).cells()[0]
    assert a.key == again.key
    for changed in ({"seeds": [4]}, {"loads": [2.0]}, {"networks": ["ideal"]}, {"annotators": ["oracle"]},
                    {"traces": [{"spec": "synth:helios:50", "compress": 2.0}]}):
        other = SweepGrid(**{"traces": ["synth:helios:50"], "policies": ["sjf"], "seeds": [3], **changed}).cells()[0]
        assert other.key != a.key, changed


def test_policy_options_given_per_policy_vary_only_that_policy():
    grid = SweepGrid(traces=["default"], policies=["fifo", "delay"],
                     policy_options={"delay": [{"node_factor": 2}, {"node_factor": 4, "load_aware": False}]})
    grid.check()
    by_policy = [(c.spec.policy, c.spec.policy_options) for c in grid.cells()]
    assert by_policy == [("fifo", {}), ("delay", {"node_factor": 2}),
                         ("delay", {"node_factor": 4, "load_aware": False})]


@pytest.mark.parametrize("axes,message", [
    ({"policies": ["lottery"]}, "policies: unknown value 'lottery'"),
    ({"annotators": ["psychic"]}, "annotators: unknown value 'psychic'"),
    ({"networks": ["fast"]}, "networks: unknown network spec"),
    ({"clusters": ["12"]}, "clusters: '12'"),
    ({"placements": ["everywhere"]}, "placements: unknown value 'everywhere'"),
    ({"policies": ["fifo"], "policy_options": [{"node_factor": 2}]}, "policy_options for fifo: policy 'fifo' takes no"),
    ({"policies": ["delay"], "policy_options": [{"bogus": 1}]}, "unknown option 'bogus'"),
    ({"policies": ["sjf"], "policy_options": {"delay": [{}]}}, "policy_options: 'delay' is not in policies"),
    ({"collect": "nowhere.at_all:fn"}, "collect: cannot import 'nowhere.at_all:fn'"),
])
def test_an_axis_value_no_cell_could_run_is_refused_before_anything_runs(axes, message):
    with pytest.raises(GridError, match=message.replace("(", r"\(")):
        SweepGrid(traces=["default"], **axes).check()


def test_a_grid_file_error_names_the_file_and_the_field(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("traces: [default]\nseeds: [zero]\n")
    with pytest.raises(GridError, match=r"g.yaml: seeds.0: "):
        load_grid(f)
    f.write_text("traces: [default]\nkeep_going: true\n")
    with pytest.raises(GridError, match=r"keep_going: Extra inputs are not permitted"):
        load_grid(f)
    f.write_text("policies: [fifo]\n")
    with pytest.raises(GridError, match="no traces"):
        load_grid(f)
    with pytest.raises(GridError, match="no such grid file"):
        load_grid(tmp_path / "missing.yaml")


def test_command_line_axes_replace_the_files_axes(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("traces: [default]\npolicies: [fifo, sjf]\nseeds: [0]\n")
    grid = load_grid(f, policies=["tiresias"], seeds=None)
    assert grid.policies == ["tiresias"] and grid.seeds == [0]


def test_an_llm_cell_waits_for_a_free_llm_slot_while_other_cells_go_ahead():
    grid = SweepGrid(traces=["default"], annotators=["schedmate", "oracle"], seeds=[0, 1])
    llm, plain = [c for c in grid.cells() if c.uses_llm], [c for c in grid.cells() if not c.uses_llm]
    assert len(llm) == 2 and len(plain) == 2
    pending = deque(grid.cells())
    assert _next_cell(pending, llm_busy=0, llm_workers=1).uses_llm
    started = [_next_cell(pending, llm_busy=1, llm_workers=1) for _ in range(2)]
    assert not any(c.uses_llm for c in started)
    assert _next_cell(pending, llm_busy=1, llm_workers=1) is None  # only an LLM cell is left
    no_llm = SweepGrid(traces=["default"], annotators=["schedmate"], annotator_options={"schedmate": {"use_llm": False}})
    assert not no_llm.cells()[0].uses_llm


def test_the_committed_main_table_grid_is_the_one_eval_main_run_builds():
    from eval.main.run import grid

    assert load_grid(ROOT / "eval" / "main" / "grid.yaml") == grid(600)


def test_a_file_of_several_grids_is_one_sweep_whose_shared_cells_run_once(tmp_path):
    f = tmp_path / "g.yaml"
    f.write_text("traces: ['synth:distributed:40']\nclusters: ['64']\nseeds: [0, 1]\ngrids:\n"
                 "  - {policies: [fifo, sjf], annotators: [none]}\n"
                 "  - {policies: [fifo, delay], annotators: [none, oracle]}\n")
    grids = load_grids(f, seeds=[5])
    assert [g.seeds for g in grids] == [[5], [5]]
    cells = sweep_cells(grids)
    assert [(c.spec.policy, c.spec.annotator) for c in cells] == [
        ("fifo", "none"), ("sjf", "none"), ("fifo", "oracle"), ("delay", "none"), ("delay", "oracle")]
    f.write_text("traces: [default]\ngrids: {policies: [fifo]}\n")
    with pytest.raises(GridError, match="grids: expected a non-empty list"):
        load_grids(f)


def test_a_scheduler_factory_names_its_own_policies_and_is_asked_before_anything_runs(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    ok = SweepGrid(traces=["default"], policies=["consolidate-fifo"], scheduler_factory="sweep_gates:consolidating_scheduler")
    ok.check()
    bad = ok.model_copy(update={"policies": ["consolidate-fifo", "lottery"]})
    with pytest.raises(GridError, match="scheduler_factory for policy 'lottery': unknown policy 'lottery'"):
        bad.check()


def test_llm_slots_matter_only_when_an_llm_server_is_named_or_served(tmp_path, monkeypatch):
    from schedmate.sweep.runner import llm_server_known

    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path))  # nothing served from here
    monkeypatch.delenv("SCHEDMATE_LLM_BASE_URL", raising=False)
    assert not llm_server_known()
    monkeypatch.setenv("SCHEDMATE_LLM_BASE_URL", "http://127.0.0.1:8102/v1")
    assert llm_server_known()
