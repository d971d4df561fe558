"""configargparse `key = value` files: the file named by an `is_config_file=True` option (or the parser's
`default_config_files`) overrides the argument parser's defaults, and the command line overrides the file.
Fixtures are written for these tests (a toy ray-sampling renderer in the NeRF style)."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.configargparse_files import looks_like_keyvalue, parse_keyvalue

from .codeprof_support import make_job

SCRIPT = """
    import configargparse
    import torch

    def build_parser():
        p = configargparse.ArgumentParser({defaults})
        p.add_argument("--config", is_config_file=True, help="settings file")
        p.add_argument("--scene_dir", type=str, default="./scenes")
        p.add_argument("--N_rand", type=int, default=16*16*2)
        p.add_argument("--n_steps", type=int, default=5000)
        return p

    args = build_parser().parse_args()
    model = TinyField().cuda()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for it in range(args.n_steps):
        rays = sample(args.N_rand)
        loss = model(rays)
        loss.backward()
        opt.step()
"""

SETTINGS = """
    # toy scene
    scene_dir = ./scenes/teapot
    N_rand = 768
    n_steps = 12000
    white_background = True
"""


def _job(tmp_path, defaults: str = ""):
    return make_job(tmp_path, {"train.py": SCRIPT.format(defaults=defaults), "settings/teapot.txt": SETTINGS})


def test_the_settings_file_overrides_the_parsers_defaults(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py --config settings/teapot.txt", use_llm=False)
    assert prof.value("micro_batch_size") == 768
    assert prof.value("train_steps") == 12000


def test_the_command_line_overrides_the_settings_file(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py --config settings/teapot.txt --n_steps 300",
                        use_llm=False)
    assert prof.value("train_steps") == 300
    assert prof.value("micro_batch_size") == 768


def test_without_a_settings_file_the_defaults_hold(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 512
    assert prof.value("train_steps") == 5000


def test_the_parsers_default_config_files_are_read_when_no_file_is_named(tmp_path):
    job = _job(tmp_path, defaults='default_config_files=["settings/teapot.txt"]')
    prof = analyze_code(job, command="python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 768


def test_key_value_lines_parse_with_equals_colon_or_space_and_comments_are_skipped():
    got = parse_keyvalue("# c\nalpha = 3\nbeta: 0.5\ngamma on\n; x\n[sec]\nlist = [1, 2]\nname = 'a b'  # tail\n")
    assert [(k, v) for k, v, _ in got] == [("alpha", 3), ("beta", 0.5), ("gamma", "on"), ("list", [1, 2]),
                                          ("name", "a b")]


def test_an_indented_yaml_file_is_not_taken_for_key_value_lines():
    assert not looks_like_keyvalue("train:\n  batch: 4\n  steps: 10\n")
    assert looks_like_keyvalue(SETTINGS.replace("    ", ""))
