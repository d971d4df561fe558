"""Configs with one block of settings per dataset (or model, or environment) that the code picks by a name
another setting gives: `cfg.hp = cfg.hp[cfg.data.name]`, `hp = cfg.table[args.dataset]`."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

HYDRA_ENTRY = (
    "import hydra\nimport torch\nfrom torch.utils.data import DataLoader\n\n\n"
    "@hydra.main(config_path='conf', config_name='main')\n"
    "def run(cfg):\n"
    "    cfg.net.hp = cfg.net.hp[cfg.data.name]\n"
    "    loader = DataLoader(ds, batch_size=cfg.net.hp.bs, shuffle=True)\n"
    "    for epoch in range(cfg.net.hp.epochs):\n"
    "        for batch in loader:\n            step(batch)\n"
    "    model.to(torch.device('cuda', 0))\n\n\nrun()\n"
)
HYDRA_CONF = {
    "conf/main.yaml": "defaults:\n  - net: mlp\n  - data: moles\nseed: 3\n",
    "conf/net/mlp.yaml": "hp:\n  moles:\n    bs: 48\n    epochs: 120\n  words:\n    bs: 256\n    epochs: 15\n"
                         "  grids:\n    bs: 2\n    epochs: 700\n",
    "conf/data/moles.yaml": "name: moles\nroot: /tmp/x\n",
    "conf/data/words.yaml": "name: words\nroot: /tmp/y\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_the_block_named_by_the_default_data_group_gives_batch_and_epochs(tmp_path):
    write(tmp_path, {"train.py": HYDRA_ENTRY, **HYDRA_CONF})
    f = analyze_code(tmp_path, "python train.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 48 and f["epochs"].value == 120


def test_a_group_override_on_the_command_line_picks_another_block(tmp_path):
    write(tmp_path, {"train.py": HYDRA_ENTRY, **HYDRA_CONF})
    f = analyze_code(tmp_path, "python train.py data=words", use_llm=False).facts
    assert f["micro_batch_size"].value == 256 and f["epochs"].value == 15


def test_a_block_copied_into_a_new_name_by_an_option_is_read_through_that_name(tmp_path):
    write(tmp_path, {
        "main.py": "import argparse\nimport yaml\nimport torch\n"
                   "p = argparse.ArgumentParser()\np.add_argument('--config', default='hp.yaml')\n"
                   "p.add_argument('--task', default='small')\nargs = p.parse_args()\n"
                   "cfg = yaml.safe_load(open(args.config))\nhp = cfg['tasks'][args.task]\n"
                   "for epoch in range(hp['num_epochs']):\n    train(hp['batch_size'])\nmodel.cuda()\n",
        "hp.yaml": "tasks:\n  small:\n    batch_size: 12\n    num_epochs: 9\n"
                   "  large:\n    batch_size: 96\n    num_epochs: 3\n",
    })
    f = analyze_code(tmp_path, "python main.py --task large", use_llm=False).facts
    assert f["epochs"].value == 3


def test_a_name_that_matches_no_block_leaves_the_ambiguous_settings_unread(tmp_path):
    write(tmp_path, {"train.py": HYDRA_ENTRY, **HYDRA_CONF,
                     "conf/data/other.yaml": "name: shapes\nroot: /tmp/z\n"})
    f = analyze_code(tmp_path, "python train.py data=other", use_llm=False).facts
    assert f.get("epochs") is None or f["epochs"].value not in {120, 15, 700}
