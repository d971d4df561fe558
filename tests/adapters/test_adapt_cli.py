"""`schedmate adapt`: dry runs from saved dumps, and clear exits on bad input."""

from conftest import EXAMPLES, NOW, REFERENCE
from typer.testing import CliRunner

from schedmate.cli import app

runner = CliRunner()


def test_a_slurm_dry_run_from_a_saved_dump_prints_the_reference_commands():
    r = runner.invoke(app, ["adapt", "slurm", "--annotations", str(EXAMPLES / "annotations.jsonl"),
                            "--state", str(EXAMPLES / "squeue.json"), "--now", str(NOW)])
    assert r.exit_code == 0, r.output
    assert r.stdout == (REFERENCE / "slurm_plan.txt").read_text()


def test_a_kubernetes_dry_run_from_a_saved_dump_prints_the_reference_commands():
    r = runner.invoke(app, ["adapt", "kubernetes", "-a", str(EXAMPLES / "annotations_k8s.jsonl"),
                            "--state", str(EXAMPLES / "kubectl_jobs.json"), "--now", str(NOW)])
    assert r.exit_code == 0, r.output
    assert r.stdout == (REFERENCE / "kubernetes_plan.txt").read_text()


def test_a_bad_annotation_line_is_named_and_exits_2(tmp_path):
    bad = tmp_path / "a.jsonl"
    bad.write_text('{"job_id": "1"}\n\n{"job_id": "2", "network_sensitivity": 7}\n')
    r = runner.invoke(app, ["adapt", "slurm", "-a", str(bad), "--state", str(EXAMPLES / "squeue.txt")])
    assert r.exit_code == 2
    assert f"{bad}:3: not an Annotation: network_sensitivity" in r.stderr


def test_applying_from_a_saved_dump_is_refused():
    r = runner.invoke(app, ["adapt", "slurm", "-a", str(EXAMPLES / "annotations.jsonl"),
                            "--state", str(EXAMPLES / "squeue.txt"), "--apply"])
    assert r.exit_code == 2 and "--state is for dry runs" in r.stderr
