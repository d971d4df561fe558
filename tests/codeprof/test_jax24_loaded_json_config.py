"""A JSON of settings the job opens itself (`json.load(open(args.config))`) gives the model's size, its
`model_`-prefixed knobs read through."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.modelsize.loaded_json import params_from_json_config, unprefixed_knobs

# our own pod-trainer settings: 16 layers x 1536 wide, 12 heads of 128, a 48k vocabulary
POD_SETTINGS = {"pod_cores": 32, "model_layers": 16, "model_dim": 1536, "model_heads": 12, "model_head_dim": 128,
                "model_vocab_size": 48128, "model_seq_len": 1024, "opt_total_steps": 90000,
                "opt_per_replica_batch": 2}

ENTRY = """
    import argparse
    import json

    from podlm.loop import run

    def options():
        p = argparse.ArgumentParser()
        p.add_argument("--settings", type=str, default="settings/smoke.json")
        return p.parse_args()

    if __name__ == "__main__":
        opts = options()
        with open(opts.settings) as fh:
            settings = json.load(fh)
        run(settings)
"""


def _job(tmp_path: Path, chosen: dict, smoke: dict | None = None) -> Path:
    (tmp_path / "settings").mkdir()
    (tmp_path / "settings" / "big.json").write_text(json.dumps(chosen))
    (tmp_path / "settings" / "smoke.json").write_text(json.dumps(smoke or {**chosen, "model_layers": 1, "model_dim": 8}))
    (tmp_path / "podlm").mkdir()
    (tmp_path / "podlm" / "__init__.py").write_text("")
    (tmp_path / "podlm" / "loop.py").write_text("def run(settings):\n    return settings\n")
    (tmp_path / "podlm" / "main.py").write_text(textwrap.dedent(ENTRY))
    return tmp_path


def test_prefixed_knobs_are_read_under_the_tables_names() -> None:
    k = unprefixed_knobs(POD_SETTINGS)
    assert (k["num_layers"], k["hidden_size"], k["num_heads"], k["vocab_size"]) == (16, 1536, 12, 48128)
    assert unprefixed_knobs({"model_layers": 4, "num_layers": 6})["num_layers"] == 6  # an unprefixed key wins


def test_a_pod_settings_file_counts_as_a_decoder_of_its_shape() -> None:
    got = params_from_json_config(POD_SETTINGS)
    assert got is not None
    # 16 x 12 x 1536^2 = 453M of blocks plus a 48128 x 1536 = 74M embedding
    assert 0.5e9 < got[0] < 0.56e9
    assert "model_layers" in got[1] and "model_vocab_size" in got[1]


def test_the_file_named_on_the_command_line_sizes_the_job(tmp_path: Path) -> None:
    root = _job(tmp_path, POD_SETTINGS)
    got = analyze_code(root, "python -m podlm.main --settings settings/big.json", use_llm=False).value("params")
    want = params_from_json_config(POD_SETTINGS)
    assert want is not None and got == want[0]


def test_without_the_flag_the_default_file_is_the_one_counted(tmp_path: Path) -> None:
    smoke = {**POD_SETTINGS, "model_layers": 2, "model_dim": 256, "model_heads": 4, "model_head_dim": 64}
    root = _job(tmp_path, POD_SETTINGS, smoke)
    got = analyze_code(root, "python -m podlm.main", use_llm=False).value("params")
    want = params_from_json_config(smoke)
    assert want is not None and got == want[0] and got < 20e6


def test_a_settings_file_without_a_depth_width_and_vocabulary_gives_no_size(tmp_path: Path) -> None:
    plain = {"opt_total_steps": 1000, "opt_per_replica_batch": 4, "model_seq_len": 512}
    root = _job(tmp_path, plain, plain)
    assert analyze_code(root, "python -m podlm.main --settings settings/big.json", use_llm=False).value("params") is None
