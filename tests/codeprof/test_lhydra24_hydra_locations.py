"""Hydra configs found where the code puts them: a `config_path` built from a computed root, module-level
`CONFIG_PATH`/`CONFIG_NAME` names, `hydra.searchpath` roots, and `group@_global_` defaults entries."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.hydra_compose import compose
from schedmate.codeprof.static.hydra_paths import locate_hydra_config
from tests.codeprof.codeprof_support import make_job

ROOTED = {
    "crystals/train.py": """
        import hydra
        from crystals.paths import HOME

        @hydra.main(config_path=str(HOME / "settings"), config_name="base")
        def main(cfg):
            loader = build(cfg.data.loader.batch_size.train)
            for epoch in range(cfg.run.epochs):
                pass

        if __name__ == "__main__":
            main()
    """,
    "crystals/paths.py": "import os\nfrom pathlib import Path\nHOME = Path(os.environ['CRYSTAL_HOME'])\n",
    "settings/base.yaml": "defaults:\n  - data: small\n  - _self_\nrun:\n  epochs: 70\n",
    "settings/data/small.yaml": "loader:\n  batch_size:\n    train: 40\n    val: 10\n",
    "settings/data/large.yaml": "loader:\n  batch_size:\n    train: 160\n    val: 80\n",
}


def test_a_config_path_built_from_a_computed_root_is_found_above_the_script(tmp_path):
    make_job(tmp_path, ROOTED)
    f = analyze_code(tmp_path, "python crystals/train.py data=large", use_llm=False).facts
    assert f["epochs"].value == 70
    assert f["micro_batch_size"].value == 160  # the `train` entry of a per-split batch size, from the chosen group


def test_two_directories_that_both_hold_the_config_are_no_answer():
    files = {"tools/conf/base.yaml", "conf/base.yaml"}
    got = locate_hydra_config(lambda p: p in files, "tools/run.py", 'str(ROOT / "conf")', "'base'", [])
    assert got is None
    assert locate_hydra_config(lambda p: p == "conf/base.yaml", "tools/run.py", 'str(ROOT / "conf")', "'base'",
                               []) == ("conf", "base")


NAMED = {
    "planner/scripts/launch_train.py": """
        import os
        import hydra

        CONFIG_PATH = os.getenv("PLANNER_CONFIG_PATH", "settings/train")
        CONFIG_NAME = "main_train"

        @hydra.main(config_path=CONFIG_PATH, config_name=CONFIG_NAME)
        def main(cfg):
            run(cfg)
    """,
    "planner/scripts/settings/train/main_train.yaml":
        "hydra:\n  searchpath:\n    - pkg://planner.scripts.settings.shared\n"
        "defaults:\n  - shared_defaults\n  - loader: plain\n  - _self_\nname: train\n",
    "planner/scripts/settings/train/loader/plain.yaml": "batch_size: 6\n",
    "planner/scripts/settings/shared/shared_defaults.yaml": "seed: 3\nnum_epochs: 12\n",
}


def test_module_level_config_names_and_searchpath_roots_compose_the_run(tmp_path):
    make_job(tmp_path, NAMED)
    f = analyze_code(tmp_path, "python planner/scripts/launch_train.py", use_llm=False).facts
    assert f["micro_batch_size"].value == 6
    assert f["epochs"].value == 12  # from a config only the search path reaches


def read(files):
    return lambda rel: files.get(rel)


def test_a_group_merged_at_global_package_sets_top_level_keys_and_the_command_line_picks_the_option():
    files = {
        "cfg/config.yaml": "defaults:\n  - _self_\n  - level@_global_: medium\nbatch_size: 128\nframes: 1000\n",
        "cfg/level/medium.yaml": "frames: 3000\n",
        "cfg/level/hard.yaml": "batch_size: 384\nframes: 9000\n",
    }
    t = compose(read(files), "cfg", "config", [])
    assert t.data["frames"] == 3000 and "_global_" not in t.data and "level" not in t.data
    t = compose(read(files), "cfg", "config", ["level=hard"])
    assert t.data["batch_size"] == 384 and t.data["frames"] == 9000
