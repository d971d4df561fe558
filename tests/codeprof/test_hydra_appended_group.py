"""A group the command line adds with `+group=option` (the option may carry its `.yaml` extension) is appended to
the primary's defaults list, so its values beat the primary's own block when `_self_` comes first."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.hydra_compose import compose

CONFIGS = {
    "conf/main.yaml": "defaults:\n  - _self_\n\nopts:\n  net: mlp\n  batch_size: 7\n  num_epochs: 20\n",
    "conf/opts/heat_1d.yaml": "net: fno\nbatch_size: 64\nnum_epochs: 300\n",
    "conf/opts/wave_2d.yaml": "net: unet\nbatch_size: 24\n",
}
SCRIPT = (
    "import hydra\n\n\n"
    "@hydra.main(version_base='1.2', config_path='conf', config_name='main')\n"
    "def run(cfg):\n"
    "    fit(batch_size=cfg.opts.batch_size, epochs=cfg.opts.num_epochs)\n\n\n"
    "def fit(batch_size, epochs):\n"
    "    import torch\n"
    "    loader = torch.utils.data.DataLoader(range(1000), batch_size=batch_size)\n"
    "    for _ in range(epochs):\n"
    "        for _b in loader:\n"
    "            pass\n\n\n"
    "if __name__ == '__main__':\n"
    "    run()\n"
)


def _tree(tmp_path):
    for rel, text in CONFIGS.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)

    def read(rel):
        p = tmp_path / rel
        return p.read_text() if p.is_file() else None
    return read


def test_an_appended_group_option_with_its_extension_overrides_the_primary_block(tmp_path):
    t = compose(_tree(tmp_path), "conf", "main", ["+opts=heat_1d.yaml", "++opts.net=fno2"])
    assert t.data["opts"]["batch_size"] == 64 and t.data["opts"]["num_epochs"] == 300
    assert t.data["opts"]["net"] == "fno2"  # a `++a.b=value` is a value, set after the merge
    assert t.where["opts.batch_size"].startswith("conf/opts/heat_1d.yaml")


def test_an_appended_group_keeps_the_primary_values_it_does_not_set(tmp_path):
    t = compose(_tree(tmp_path), "conf", "main", ["+opts=wave_2d"])
    assert t.data["opts"]["batch_size"] == 24 and t.data["opts"]["num_epochs"] == 20


def test_without_the_appended_group_the_primary_block_stands(tmp_path):
    t = compose(_tree(tmp_path), "conf", "main", [])
    assert t.data["opts"]["batch_size"] == 7


def test_the_analyzer_reads_the_batch_and_epochs_of_the_appended_option(tmp_path):
    _tree(tmp_path)
    (tmp_path / "train.py").write_text(SCRIPT)
    prof = analyze_code(tmp_path, command="CUDA_VISIBLE_DEVICES=0 python train.py +opts=heat_1d.yaml", use_llm=False)
    assert prof.facts["micro_batch_size"].value == 64
    assert prof.facts["epochs"].value == 300
