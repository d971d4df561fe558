"""A config loaded recursively (`setup_config(path, recursive=True)`, torchpack-style) sits over the `default.yaml`
files of the directories above it: the run's epochs and batch may live only in a parent's defaults."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

TRAIN = (
    "import argparse\n\n"
    "from tools.setup import load_recursive\n\n"
    "parser = argparse.ArgumentParser()\n"
    "parser.add_argument('config')\n"
    "args = parser.parse_args()\n"
    "cfg = load_recursive(args.config, recursive=True)\n"
    "run(cfg['run']['max_epochs'], cfg['loader']['batch_size'])\n"
)
SETUP = (
    "import os\n\nimport yaml\n\n\n"
    "def load_recursive(path, recursive=False):\n"
    "    paths = [path]\n"
    "    while recursive and os.path.dirname(path) != path:\n"
    "        path = os.path.dirname(path)\n"
    "        if os.path.isfile(os.path.join(path, 'default.yaml')):\n"
    "            paths.append(os.path.join(path, 'default.yaml'))\n"
    "    out = {}\n"
    "    for p in reversed(paths):\n"
    "        out.update(yaml.safe_load(open(p)))\n"
    "    return out\n"
)


def _job(tmp_path, recursive: bool = True):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "__init__.py").write_text("")
    (tmp_path / "tools" / "setup.py").write_text(SETUP)
    (tmp_path / "train.py").write_text(TRAIN if recursive else TRAIN.replace(", recursive=True", ""))
    cfgs = tmp_path / "cfgs" / "imgs"
    cfgs.mkdir(parents=True)
    (tmp_path / "cfgs" / "default.yaml").write_text("run:\n  max_epochs: 90\nloader:\n  batch_size: 48\n")
    (cfgs / "default.yaml").write_text("run:\n  max_epochs: 120\n")
    (cfgs / "net_s.yaml").write_text("net:\n  name: net-s\n  width: 32\n")
    (cfgs / "net_m.yaml").write_text("run:\n  max_epochs: 150\nnet:\n  name: net-m\n")
    return tmp_path


def test_a_recursively_loaded_config_takes_its_parents_defaults_nearest_first(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py cfgs/imgs/net_s.yaml", use_llm=False)
    assert prof.facts["epochs"].value == 120  # the nearer default.yaml beats the outer one
    assert prof.facts["micro_batch_size"].value == 48  # only the outer default names the batch


def test_the_named_config_beats_its_parents_defaults(tmp_path):
    prof = analyze_code(_job(tmp_path), command="python train.py cfgs/imgs/net_m.yaml", use_llm=False)
    assert prof.facts["epochs"].value == 150


def test_without_recursive_loading_the_parents_defaults_are_not_read(tmp_path):
    prof = analyze_code(_job(tmp_path, recursive=False), command="python train.py cfgs/imgs/net_s.yaml", use_llm=False)
    assert "cfgs/default.yaml" not in prof.extras.get("files_read", [])
    assert "cfgs/imgs/default.yaml" not in prof.extras.get("files_read", [])
