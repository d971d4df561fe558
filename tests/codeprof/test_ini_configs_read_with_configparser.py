"""INI files a training script reads with `configparser`: the file named in `config.read(...)` is loaded, its
sections become config keys, and the typed getters (`getint`, `getfloat`, `get(section, key)`,
`cp[section].getint(key)`, `fallback=`) resolve to the file's values. Fixtures are written for these tests."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.ini_config import ini_config, looks_like_ini

from .codeprof_support import make_job

INI = """
    ; settings for the toy segmenter
    [DEFAULT]
    workers = 4

    [optim]
    lr = 3e-4
    n_epochs = 36
    batch_size = 18
    use_amp = yes
    tag = run_%(n_epochs)s
"""

SCRIPT = """
    import configparser
    import torch

    cp = configparser.ConfigParser()
    cp.read("{path}")
    {epochs_line}
    batch = cp["optim"].getint("batch_size")
    net = Segmenter().cuda()
    loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
    for epoch in range(n_epochs):
        for x, y in loader:
            loss = net(x, y)
            loss.backward()
            opt.step()
"""


def test_an_ini_file_is_typed_the_way_configparsers_getters_read_it():
    import textwrap

    cfg = ini_config(textwrap.dedent(INI), "optim.ini")
    assert cfg["optim"]["n_epochs"] == 36
    assert cfg["optim"]["lr"] == 3e-4
    assert cfg["optim"]["use_amp"] is True
    assert cfg["optim"]["workers"] == 4  # inherited from DEFAULT
    assert cfg["optim"]["tag"] == "run_36"  # %(name)s interpolation
    assert looks_like_ini(textwrap.dedent(INI))
    assert not looks_like_ini("epochs: 3\n[not, a, header]\n")


def test_values_read_with_getint_and_a_section_subscript_come_from_the_ini_file(tmp_path):
    make_job(tmp_path, {"conf/optim.ini": INI, "train.py": SCRIPT.format(
        path="conf/optim.ini", epochs_line='n_epochs = cp.getint("optim", "n_epochs")')})
    prof = analyze_code(tmp_path, command="python train.py", use_llm=False)
    assert prof.value("epochs") == 36
    assert prof.value("micro_batch_size") == 18


def test_a_plain_get_with_section_and_key_reads_the_file_too(tmp_path):
    make_job(tmp_path, {"optim.ini": INI, "train.py": SCRIPT.format(
        path="optim.ini", epochs_line='n_epochs = int(cp.get("optim", "n_epochs"))')})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("epochs") == 36


def test_a_fallback_is_used_when_the_file_lacks_the_key(tmp_path):
    no_epochs = INI.replace("    n_epochs = 36\n", "").replace("%(n_epochs)s", "a")
    make_job(tmp_path, {"optim.ini": no_epochs, "train.py": SCRIPT.format(
        path="optim.ini", epochs_line='n_epochs = cp.getint("optim", "max_epochs", fallback=12)')})
    assert analyze_code(tmp_path, command="python train.py", use_llm=False).value("epochs") == 12


MERGED = """
    import argparse
    from omegaconf import OmegaConf

    p = argparse.ArgumentParser()
    p.add_argument("--config", default="conf/run_small.yaml")
    args, rest = p.parse_known_args()
    cfg = OmegaConf.merge(OmegaConf.load("conf/base.yaml"), OmegaConf.load(args.config), OmegaConf.from_cli(rest))
    net = Denoiser().cuda()
    loader = DataLoader(data, batch_size=cfg.train.batch_size)
    step = 0
    while step < cfg.train.total_steps:
        for x in loader:
            opt.step()
            step += 1
"""


def test_a_config_chosen_by_an_option_overrides_the_defaults_file_the_code_loads_by_path(tmp_path):
    make_job(tmp_path, {"train.py": MERGED, "conf/base.yaml": "train:\n  total_steps: 4000\n  batch_size: 6\n",
                        "conf/run_small.yaml": "train:\n  total_steps: 6500\n"})
    prof = analyze_code(tmp_path, command="python train.py", use_llm=False)
    assert prof.value("train_steps") == 6500
    assert prof.value("micro_batch_size") == 6
    prof = analyze_code(tmp_path, command="python train.py --config conf/base.yaml", use_llm=False)
    assert prof.value("train_steps") == 4000
