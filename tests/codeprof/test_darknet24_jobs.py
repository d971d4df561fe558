"""Jobs that build their network from a Darknet `.cfg` they name (on the command line, as an argparse default, or
as a path literal in a Python config): the analyzer counts its layers; it reads the cfg's `[net]` batch only when
the training code subscripts `batch` and `subdivisions` from the parsed file, not when the port takes its batch
from argparse or a Python config."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job
from .test_darknet24_cfg_reader import SMALL_CFG, SMALL_PARAMS

PARSER = """
    def read_blocks(path):
        blocks = []
        for line in open(path):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                blocks.append({"kind": line[1:-1]})
            else:
                k, v = line.split("=", 1)
                blocks[-1][k.strip()] = v.strip()
        return blocks


    class GridNet:
        def __init__(self, path):
            self.blocks = read_blocks(path)
            self.settings = self.blocks.pop(0)
"""

NET_KEYS_ENTRY = """
    import argparse
    import torch
    from torch.utils.data import DataLoader
    from gridnet import GridNet

    p = argparse.ArgumentParser()
    p.add_argument("--net", type=str, default="nets/small-grid.cfg")
    p.add_argument("--epochs", type=int, default=40)
    args = p.parse_args()

    model = GridNet(args.net)
    pieces = int(model.settings['subdivisions'])
    loader = DataLoader(list(range(500)), batch_size=int(model.settings['batch']) // pieces, shuffle=True)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    done = 0
    for epoch in range(args.epochs):
        for imgs in loader:
            done += 1
            model(imgs.cuda()).sum().backward()
            if done % pieces == 0:
                opt.step()
                opt.zero_grad()
"""

ARGPARSE_ENTRY = """
    import argparse
    import torch
    from torch.utils.data import DataLoader
    from gridnet import GridNet

    p = argparse.ArgumentParser()
    p.add_argument("--cfg", type=str, required=True)
    p.add_argument("--batch-size", type=int, default=6)
    p.add_argument("--epochs", type=int, default=25)
    args = p.parse_args()

    model = GridNet(args.cfg).cuda()
    loader = DataLoader(list(range(500)), batch_size=args.batch_size, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for imgs in loader:
            model(imgs.cuda()).sum().backward()
            opt.step()
            opt.zero_grad()
"""

PY_SETTINGS = """
    import os
    from easydict import EasyDict

    HERE = os.path.dirname(os.path.abspath(__file__))
    S = EasyDict()
    S.netfile = os.path.join(HERE, 'nets', 'small-grid.cfg')
    S.batch = 40
    S.subdivisions = 5
    S.n_epochs = 60
"""

PY_SETTINGS_ENTRY = """
    import torch
    from torch.utils.data import DataLoader
    from gridnet import GridNet
    from settings import S

    model = GridNet(S.netfile).cuda()
    loader = DataLoader(list(range(500)), batch_size=S.batch // S.subdivisions, shuffle=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = 0
    for epoch in range(S.n_epochs):
        for imgs in loader:
            step += 1
            model(imgs.cuda()).sum().backward()
            if step % S.subdivisions == 0:
                opt.step()
                opt.zero_grad()
"""


def test_a_job_that_reads_the_net_section_trains_batch_over_subdivisions_per_pass(tmp_path):
    make_job(tmp_path, {"nets/small-grid.cfg": SMALL_CFG, "gridnet.py": PARSER, "train.py": NET_KEYS_ENTRY})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("params") == SMALL_PARAMS
    assert res.value("micro_batch_size") == 8
    assert res.value("grad_accum_steps") == 3
    assert res.value("global_batch_size") == 24


def test_a_port_that_takes_its_batch_from_argparse_ignores_the_cfg_training_section(tmp_path):
    make_job(tmp_path, {"nets/small-grid.cfg": SMALL_CFG, "gridnet.py": PARSER, "train.py": ARGPARSE_ENTRY})
    res = analyze_code(tmp_path, "python train.py --cfg nets/small-grid.cfg", use_llm=False)
    assert res.value("params") == SMALL_PARAMS
    assert res.value("micro_batch_size") == 6
    assert res.value("global_batch_size") == 6


def test_a_cfg_named_by_a_path_literal_in_a_python_config_is_counted_and_its_net_batch_is_not_read(tmp_path):
    make_job(tmp_path, {"nets/small-grid.cfg": SMALL_CFG, "gridnet.py": PARSER, "settings.py": PY_SETTINGS,
                        "train.py": PY_SETTINGS_ENTRY})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("params") == SMALL_PARAMS
    assert not any("small-grid.cfg" in w for w in res.facts["micro_batch_size"].evidence)
    assert res.value("grad_accum_steps") != 3


def test_a_job_that_names_no_cfg_gets_no_darknet_count(tmp_path):
    make_job(tmp_path, {"nets/small-grid.cfg": SMALL_CFG, "gridnet.py": PARSER,
                        "train.py": ARGPARSE_ENTRY.replace("GridNet(args.cfg)", "torch.nn.Linear(4, 4)")
                        .replace('p.add_argument("--cfg", type=str, required=True)\n', "")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("params") != SMALL_PARAMS


def test_a_cfg_with_an_unknown_layer_gives_no_darknet_count(tmp_path):
    make_job(tmp_path, {"nets/small-grid.cfg": SMALL_CFG + "\n[fancy_attention]\nheads=4\n", "gridnet.py": PARSER,
                        "train.py": ARGPARSE_ENTRY})
    res = analyze_code(tmp_path, "python train.py --cfg nets/small-grid.cfg", use_llm=False)
    assert res.value("params") != SMALL_PARAMS
