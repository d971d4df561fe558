"""The real-jobs corpus pipeline: manifest -> rebuilt cache (digests verified) -> scored analyzer.

CI cannot fetch public repositories, so these tests build a small repository of our own with git and
run the same code paths the real corpus goes through."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from eval.realjobs.corpus import CodeItem, split_of
from eval.realjobs.rebuild import Sources, build_code
from eval.realjobs.run import evaluate, field_right, load_index, summary

FILES = {
    "scripts/train.sh": "#!/bin/bash\nNGPU=${NGPU:-8}\ntorchrun --nproc_per_node=$NGPU train.py --config configs/base.yaml "
                        "--max_steps 5000\n",
    "configs/base.yaml": "per_device_train_batch_size: 4\ngradient_accumulation_steps: 2\n",
    "train.py": "import argparse\nimport torch\np = argparse.ArgumentParser()\np.add_argument('--config')\n"
                "p.add_argument('--max_steps', type=int, default=100)\nargs = p.parse_args()\n"
                "model = torch.nn.Linear(4, 4).cuda()\n",
}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str]:
    work = tmp_path / "work"
    for rel, text in FILES.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    bare = tmp_path / "mirror" / "ourorg+toyjobs" / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True)
    return tmp_path / "mirror", commit


def item(commit: str, **labels: object) -> CodeItem:
    base = {"params": None, "global_batch_size": 64, "micro_batch_size": 4, "num_gpus": 8, "train_steps": 5000,
            "epochs": None}
    base.update(labels)
    return CodeItem.model_validate({
        "id": "ourorg/toyjobs:train", "origin": {"repo": "ourorg/toyjobs", "commit": commit},
        "command": "bash scripts/train.sh",
        "files": [{"path": p, "sha256": sha(t), "role": "source"} for p, t in FILES.items()],
        "framework": "pytorch", "domain": "llm", "labels": base,
        "null_why": {"params": "no model config in the fixture", "epochs": "steps given"},
        "how_derived": "fixture"})


def test_a_manifest_item_is_rebuilt_from_the_snapshot_and_scored_field_by_field(mirror, tmp_path):
    mirror_dir, commit = mirror
    out = tmp_path / "cache"
    n, problems = build_code([item(commit)], Sources(mirror_dir, out), out)
    assert (n, problems) == (1, [])
    df = evaluate([item(commit)], load_index(out), ["static"], progress=False)
    got = df.set_index("field")["got"].to_dict()
    assert got["num_gpus"] == 8 and got["micro_batch_size"] == 4 and got["train_steps"] == 5000
    assert got["global_batch_size"] == 64  # micro 4 x accumulation 2 x 8 GPUs
    overall = summary(df)["overall"]
    assert overall.loc["static", "fields_right"] == 1.0
    assert overall.loc["static", "wrong_numbers"] == 0


def test_a_wrong_label_is_scored_as_wrong_not_ignored(mirror, tmp_path):
    mirror_dir, commit = mirror
    out = tmp_path / "cache"
    wrong = item(commit, train_steps=100)  # the argparse default, which the command line overrides
    build_code([wrong], Sources(mirror_dir, out), out)
    df = evaluate([wrong], load_index(out), ["static"], progress=False)
    assert not df.set_index("field").loc["train_steps", "right"]


def test_a_file_that_changed_since_labelling_is_not_built(mirror, tmp_path):
    mirror_dir, commit = mirror
    bad = item(commit)
    bad.files[0].sha256 = "0" * 64
    n, problems = build_code([bad], Sources(mirror_dir, tmp_path / "cache"), tmp_path / "cache")
    assert n == 0 and "sha256 differs" in problems[0]


def test_a_missing_snapshot_is_named():
    n, problems = build_code([item("a" * 40)], Sources(Path("/nonexistent"), Path("/tmp/unused-cache")),
                             Path("/tmp/unused-cache"))
    assert n == 0 and "fetch it first" in problems[0]


def test_reserved_repositories_are_refused_by_the_manifest_schema():
    with pytest.raises(ValueError, match="reserved"):
        CodeItem.model_validate({**item("a" * 40).model_dump(), "origin": {"repo": "karpathy/nanoGPT",
                                                                           "commit": "a" * 40}})


def test_the_split_is_by_repository_and_stable():
    assert split_of("ourorg/toyjobs") == split_of("OurOrg/ToyJobs")
    assert {split_of(f"org/repo{i}") for i in range(20)} == {"dev", "test"}


def test_params_are_right_within_one_and_a_half_times_and_null_must_match_null():
    assert field_right("params", 1.4e9, 1.0e9) and not field_right("params", 1.6e9, 1.0e9)
    assert field_right("epochs", None, None) and not field_right("epochs", 3, None)
    assert not field_right("train_steps", None, 5000)


def test_eval_prompts_on_the_real_corpus_says_how_to_build_it_when_it_is_missing(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from schedmate.cli import app

    monkeypatch.setenv("SCHEDMATE_HOME", str(tmp_path / "home"))
    r = CliRunner().invoke(app, ["eval", "prompts", "--component", "code", "--corpus", "real", "--no-llm",
                                 "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "eval.realjobs.rebuild" in r.output


def test_a_lost_issue_excerpt_is_recovered_from_a_search_result_that_quotes_it():
    from eval.realjobs.rebuild import recover_excerpt

    saved = "Epoch 1/10\n  3/234 [....] - loss: nan\n"
    # the search tool returns the thread's text around the quote, with markdown quote marks and trailing blanks
    candidate = "org/repo · issue #1\n# title\n\n```\n> Epoch 1/10   \n>   3/234 [....] - loss: nan\n```\nthanks"
    hits = recover_excerpt(candidate, {sha(saved): "item"})
    assert [t for _, t in hits] == [saved]
    assert recover_excerpt("nothing like it", {sha(saved): "item"}) == []


def test_an_issue_excerpt_needs_a_find_query_and_a_file_log_has_none():
    from eval.realjobs.corpus import LogSource

    with pytest.raises(ValueError, match="find"):
        LogSource(issue_url="https://github.com/o/r/issues/1", excerpt_sha256=sha("x"))
    assert LogSource(issue_url="https://github.com/o/r/issues/1", excerpt_sha256=sha("x"), find="o r loss nan").find
    with pytest.raises(ValueError, match="find"):
        LogSource(origin={"repo": "o/r", "commit": "a" * 40}, path="log.txt", sha256=sha("x"),
                  excerpt_sha256=sha("x"), find="q")


def test_items_missing_from_the_cache_are_named_on_stderr_not_skipped_in_silence(capsys):
    from eval.realjobs.corpus import warn_unbuilt

    warn_unbuilt(["a", "b", "c"], {"b": "x"}, "logs")
    err = capsys.readouterr().err
    assert "2 of 3 logs not built" in err and "a, c" in err
    warn_unbuilt(["b"], {"b": "x"}, "logs")
    assert capsys.readouterr().err == ""
