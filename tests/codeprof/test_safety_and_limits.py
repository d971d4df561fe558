"""The analyzer never executes job files, and reads within size limits (binaries, symlinks, caps)."""

from __future__ import annotations

import os

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.reader import Workdir

from .codeprof_support import make_job


def test_analyzing_a_job_never_executes_its_scripts_configs_or_wrappers(tmp_path):
    job = tmp_path / "job"
    marker = tmp_path / "EXECUTED"
    files = {
        "train.py": f"""
            import os, pathlib
            pathlib.Path({str(marker)!r}).write_text("module level ran")
            from helper import side_effect
            import argparse
            p = argparse.ArgumentParser()
            p.add_argument("--batch_size", type=int, default=__import__("os").system("touch {marker}") or 8)
            p.add_argument("--epochs", type=int, default=3)
            args = p.parse_args()
            if __name__ == "__main__":
                os.system("touch {marker}")
        """,
        "helper.py": f"import pathlib\npathlib.Path({str(marker)!r}).touch()\ndef side_effect():\n    pass\n",
        "config/override.py": f"import os\nos.system('touch {marker}')\nbatch_size = 4\n",
        "run.sh": f"touch {marker}\nCOUNT=$(touch {marker}; echo 2)\n"
        "torchrun --nproc_per_node $COUNT train.py config/override.py\n",
    }
    make_job(job, files)
    prof = analyze_code(job, command="bash run.sh", use_llm=False)
    assert not marker.exists()
    assert prof.value("epochs") == 3  # the file was read, just not run
    assert prof.value("micro_batch_size") == 4  # config/override.py literal, its os.system line ignored


def test_files_over_the_per_file_cap_binaries_and_escaping_symlinks_are_skipped_with_a_reason(tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("batch_size = 999\n")
    job = make_job(tmp_path / "job", {"train.py": "import torch\nbatch_size = 16\n"})
    (job / "big.yaml").write_text("a: 1\n" * 100_000)
    (job / "weights.json").write_bytes(b"\x00\x01binary")
    os.symlink(outside, job / "link.py")
    wd = Workdir(job, max_file_bytes=64 * 1024)
    assert wd.read_text("big.yaml") is None and "per-file cap" in wd.skipped["big.yaml"]
    assert wd.read_text("weights.json") is None and "binary" in wd.skipped["weights.json"]
    assert wd.read_text("link.py") is None and "symlink" in wd.skipped["link.py"]
    assert wd.read_text("../secret.py") is None and "outside" in wd.skipped["../secret.py"]
    assert "link.py" not in wd.list_files()
    assert wd.read_text("train.py") is not None and "train.py" in wd.hashes


def test_the_total_read_budget_stops_reading_once_spent(tmp_path):
    job = make_job(tmp_path, {f"f{i}.py": "x = 1\n" * 200 for i in range(5)})
    wd = Workdir(job, max_total_bytes=3000)
    got = [wd.read_text(f"f{i}.py") for i in range(5)]
    assert got[0] is not None and got[-1] is None
    assert "total read budget" in wd.skipped["f4.py"]


def test_an_entry_script_behind_an_escaping_symlink_gives_a_profile_with_a_warning_not_its_content(tmp_path):
    outside = tmp_path / "outside_train.py"
    outside.write_text("import torch\nbatch_size = 4096\n")
    job = tmp_path / "job"
    job.mkdir()
    os.symlink(outside, job / "train.py")
    prof = analyze_code(job, command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") is None
    assert any("train.py" in w and "symlink" in w for w in prof.warnings)


def test_a_python_syntax_error_is_reported_with_file_and_line_and_the_command_still_counts(tmp_path):
    job = make_job(tmp_path, {"train.py": "import torch\ndef broken(:\n"})
    prof = analyze_code(job, command="torchrun --nnodes 2 --nproc_per_node 4 train.py", use_llm=False)
    assert prof.value("num_gpus") is None or prof.value("num_nodes") == 2
    assert prof.value("num_nodes") == 2
    assert any(w.startswith("train.py:2") and "syntax error" in w for w in prof.warnings)
