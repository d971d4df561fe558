"""Real-cluster noise on top of the semantic augmentation: off by default, scalable, calibrated, and it does what it says."""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from pathlib import Path

import pytest

from schedmate.codeprof.analyzer import analyze_code
from schedmate.semantic import TEMPLATES, augment, load_plan
from schedmate.semantic.augment import EARLY_STOP_SHARE, SemanticNoise, length_hidden, materialize
from schedmate.semantic.catalogue import default_params
from schedmate.semantic.noise import CALIBRATED_NOISE, LENGTH_ENV, PLAIN_ITER_SIGMA, hide_length
from schedmate.traces import load_trace, shared_traces_dir

PLAIN_DIGEST = "e7a5841a449fb877e8a3d02e029aa6cfb0d37464944fd29ee681968e31838dfe"
"""sha256 of every plan and workdir file the plain augmentation writes for `synth:philly:300:1`, seed 5, with
the plans' numbers to 12 significant digits. It pins the plain augmentation as main produced it before the
noise knobs existed (commit f9ebc0f gives this digest too; recomputed 2026-11-27 with numbers rounded: the
durations' last bit used to depend on the CPU's exp/log kernels). A deliberate change to the templates or
the plain augmentation changes it: recompute it with `digest` and say so in the commit."""


def rounded(value: object) -> object:
    """Numbers to 12 significant digits: a last-bit difference between CPUs' libm is not a change."""
    if isinstance(value, float):
        return float(f"{value:.12g}")
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rounded(v) for v in value]
    return value


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(root).as_posix()
        text = f.read_text()
        if rel.startswith("_plans/"):
            d = json.loads(text)
            d["workdir"], d["log_path"] = Path(d["workdir"]).name, Path(d["log_path"]).name
            text = json.dumps(rounded(d), sort_keys=True)
        h.update(rel.encode() + b"\0" + text.encode() + b"\0")
    return h.hexdigest()


def plans(tmp_path, noise, name, spec="synth:acme:1500:5"):
    out = augment(load_trace(spec).jobs, tmp_path / name, seed=3, write=False, noise=noise)
    return [load_plan(j) for j in out]


def test_noise_zero_writes_exactly_the_files_and_plans_of_the_plain_augmentation(tmp_path):
    jobs = load_trace("synth:philly:300:1").jobs
    augment(jobs, tmp_path / "none", seed=5)
    augment(jobs, tmp_path / "zero", seed=5, noise=CALIBRATED_NOISE.scaled(0))
    assert digest(tmp_path / "none") == PLAIN_DIGEST
    assert digest(tmp_path / "zero") == PLAIN_DIGEST


def test_iteration_time_noise_widens_the_spread_around_the_template(tmp_path):
    def spread(ps):
        return statistics.pstdev(math.log(p.iter_s / TEMPLATES[p.template].iter_s) for p in ps)

    plain, noisy = spread(plans(tmp_path, None, "a")), spread(plans(tmp_path, SemanticNoise(iter_time_sigma=0.5), "b"))
    assert noisy**2 - plain**2 > 0.5 * 0.5**2  # independent log-normal noise adds its variance


def test_a_total_dispersion_adds_only_what_the_plain_spread_lacks():
    assert SemanticNoise(iter_time_total=PLAIN_ITER_SIGMA * 0.9).added_iter_sigma == 0.0
    total = SemanticNoise(iter_time_total=0.3)
    assert total.added_iter_sigma**2 + PLAIN_ITER_SIGMA**2 == pytest.approx(0.3**2)
    assert total.scaled(2).added_iter_sigma**2 + PLAIN_ITER_SIGMA**2 == pytest.approx(0.6**2)


def test_the_stop_early_share_adds_runs_whose_configured_length_overshoots(tmp_path):
    noisy = plans(tmp_path, SemanticNoise(stop_early_share=0.3), "b")
    completed = [p for p in noisy if p.outcome == "completed"]
    share = sum(p.early_stop for p in completed) / len(completed)
    assert abs(share - (EARLY_STOP_SHARE + 0.3)) < 0.05, share
    for p in completed:
        assert (p.planned_s > p.duration_s) == p.early_stop


@pytest.mark.parametrize("k", [1, 2])
def test_the_calibrated_noise_and_twice_it_change_dispersion_stops_and_readable_lengths_as_calibrated(tmp_path, k):
    def measure(ps):
        completed = [p for p in ps if p.outcome == "completed"]
        return (statistics.pstdev(math.log(p.iter_s / TEMPLATES[p.template].iter_s) for p in ps if p.planned_s > 3600),
                sum(p.early_stop for p in completed) / len(completed),
                sum(length_hidden(p) for p in ps) / len(ps))

    noise = CALIBRATED_NOISE.scaled(k)
    plain, noisy = measure(plans(tmp_path, None, "a")), measure(plans(tmp_path, noise, "b"))
    if noise.added_iter_sigma:  # at noise 1 the plain spread already has the calibrated dispersion (next test)
        assert noisy[0] ** 2 - plain[0] ** 2 > 0.5 * noise.added_iter_sigma**2
    assert abs(noisy[1] - plain[1] - k * CALIBRATED_NOISE.stop_early_share) < 0.05, (plain, noisy)
    assert plain[2] == 0 and abs(noisy[2] - k * CALIBRATED_NOISE.no_length_share) < 0.015, noisy


def test_at_the_calibrated_noise_the_plain_spread_already_gives_the_iteration_dispersion(tmp_path):
    assert CALIBRATED_NOISE.added_iter_sigma == 0.0  # MLPerf's between-system sigma is below the plain one
    a, b = plans(tmp_path, None, "a"), plans(tmp_path, CALIBRATED_NOISE, "b")
    same = [(x, y) for x, y in zip(a, b, strict=True) if x.early_stop == y.early_stop]
    assert len(same) > 0.8 * len(a)
    assert all(x.iter_s == y.iter_s for x, y in same)  # only the added stops refit a job's timing


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_hidden_length_is_unreadable_to_the_code_analyzer_but_the_rest_is_not(tmp_path, name):
    t = TEMPLATES[name]
    g = 0 if not t.fits(1) and not t.fits(8) else (8 if t.fits(8) else 1)
    p = default_params(t, g, 5000, seed=1)
    files = hide_length(t.render(p))
    assert any(f"${{{LENGTH_ENV}}}" in text or f'os.environ["{LENGTH_ENV}"]' in text for text in files.values())
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    got = analyze_code(tmp_path, None, use_llm=False).to_contract()
    assert got["train_steps"] is None and got["epochs"] is None
    assert got["num_gpus"] == t.expected(p)["num_gpus"]


def test_a_length_hidden_job_is_written_the_same_whether_eager_or_lazy(tmp_path):
    jobs = load_trace("synth:helios:300:2").jobs
    noise = SemanticNoise(no_length_share=0.5)
    eager = augment(jobs, tmp_path / "eager", seed=1, noise=noise)
    lazy = augment(jobs, tmp_path / "lazy", seed=1, noise=noise, write=False)
    hidden = [(e, z) for e, z in zip(eager, lazy, strict=True) if length_hidden(load_plan(e))]
    assert len(hidden) > 100
    for e, z in hidden[:20]:
        wd = materialize(load_plan(z))
        for f in Path(e.semantic.workdir).rglob("*"):
            if f.is_file():
                assert (wd / f.relative_to(e.semantic.workdir)).read_text() == f.read_text()


def test_hiding_a_length_in_files_that_state_none_is_refused():
    with pytest.raises(ValueError, match="no configured length"):
        hide_length({"command.txt": "python train.py --lr 0.1\n", "train.py": "print('hi')\n"})


def test_a_negative_or_infinite_scale_is_refused():
    with pytest.raises(ValueError):
        SemanticNoise(0.3).scaled(-1)
    with pytest.raises(ValueError):
        SemanticNoise(0.3).scaled(float("inf"))


def test_the_calibrated_defaults_are_what_calibrate_derives_from_the_data():
    if not (shared_traces_dir() / "helios" / "helios_cluster_summary.csv").exists():
        pytest.skip(f"cluster summaries not found under {shared_traces_dir()} (set SCHEDMATE_SHARED_TRACES)")
    from eval.realjobs.calibrate import calibrate

    derived, _ = calibrate()
    assert derived == CALIBRATED_NOISE, "re-run `python -m eval.realjobs.calibrate` and update CALIBRATED_NOISE"
