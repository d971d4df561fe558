"""Three readings of plain scripts: a library `fit` whose epoch keyword is not `epochs`, an off-policy loop
over `tqdm(range(1, N + 1))` that starts updating after a warm-up, and defaults a script loads from a path
built from its own location (`os.path.join(os.path.dirname(__file__), "config", "default.yaml")`)."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.script_paths import path_from_script_dir


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_a_library_fit_called_with_n_epochs_gives_the_epochs_as_read_not_as_a_candidate(tmp_path):
    write(tmp_path, {
        "run_tabular.py": (
            "import torch\nfrom tabkit import Learner\n\nif __name__ == '__main__':\n"
            "    for head in [small_head, big_head]:\n"
            "        learner = Learner(head, objective='binary')\n"
            "        learner.fit(X_train=x, target=y, n_epochs=7, batch_size=512, val_split=0.1)\n"),
        "tabkit/__init__.py": "from tabkit.learner import Learner\n",
        "tabkit/learner.py": (
            "class Learner:\n    def __init__(self, model, objective='regression'):\n        self.model = model\n\n"
            "    def fit(self, X_train=None, target=None, n_epochs: int = 1, batch_size: int = 32, val_split=None):\n"
            "        for epoch in range(n_epochs):\n            self._train_epoch(batch_size)\n"),
    })
    f = analyze_code(tmp_path, "python run_tabular.py", use_llm=False).facts
    assert f["epochs"].value == 7 and f["micro_batch_size"].value == 512
    assert f["epochs"].evidence == ["run_tabular.py:7"] and not (f["epochs"].note or "").startswith("read from a candidate")


def test_updates_after_a_warm_up_in_a_loop_over_a_shifted_range_in_a_progress_bar(tmp_path):
    write(tmp_path, {"learn.py": (
        "from absl import app, flags\nimport tqdm\nFLAGS = flags.FLAGS\n"
        "flags.DEFINE_integer('total_steps', 300000, 'env steps')\n"
        "flags.DEFINE_integer('warmup', 5000, 'random steps first')\n"
        "flags.DEFINE_integer('updates_per_step', 2, 'updates per env step')\n"
        "flags.DEFINE_integer('batch_size', 128, 'batch')\n\n"
        "def main(_):\n"
        "    for t in tqdm.tqdm(range(1, FLAGS.total_steps + 1), smoothing=0.1):\n"
        "        obs = env.step(act)\n"
        "        if t >= FLAGS.warmup:\n"
        "            for _ in range(FLAGS.updates_per_step):\n"
        "                batch = buffer.sample(FLAGS.batch_size)\n"
        "                info = learner.update(batch)\n"
        "            if t % 100 == 0:\n"
        "                log(info)\n\n"
        "app.run(main)\n")})
    f = analyze_code(tmp_path, "python learn.py --total_steps=100000", use_llm=False).facts
    assert f["train_steps"].value == (100001 - 5000) * 2


def test_a_defaults_file_loaded_from_the_scripts_own_directory_is_read(tmp_path):
    write(tmp_path, {
        "src/main.py": (
            "import os\nimport sys\nimport yaml\n\n"
            "def pick(argv, flag, sub):\n"
            "    name = [a.split('=')[1] for a in argv if a.startswith(flag)][0]\n"
            "    with open(os.path.join(os.path.dirname(__file__), 'conf', sub, '{}.yaml'.format(name))) as f:\n"
            "        return yaml.safe_load(f)\n\n"
            "with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'conf', 'base.yaml')) as f:\n"
            "    cfg = yaml.safe_load(f)\n"
            "cfg.update(pick(sys.argv, '--config', 'algos'))\nrun(cfg)\n"),
        "src/conf/base.yaml": "use_cuda: true\nbatch_size: 24\nlr: 0.001\n",
        "src/conf/algos/fast.yaml": "batch_size: 6\nlr: 0.01\n",
        "src/conf/algos/slow.yaml": "lr: 0.0001\n",
    })
    slow = analyze_code(tmp_path, "python src/main.py --config=slow", use_llm=False).facts
    assert slow["micro_batch_size"].value == 24
    fast = analyze_code(tmp_path, "python src/main.py --config=fast", use_llm=False).facts
    assert fast["micro_batch_size"].value == 6


def test_a_path_built_from_anything_but_the_scripts_location_stays_unknown():
    assert path_from_script_dir("os.path.join(os.path.dirname(__file__), 'c', 'd.yaml')", "a/b.py") == "a/c/d.yaml"
    assert path_from_script_dir("Path(__file__).resolve().parent / 'conf' / 'x.yaml'", "run.py") == "conf/x.yaml"
    assert path_from_script_dir("os.path.join(args.root, 'd.yaml')", "a/b.py") is None
    assert path_from_script_dir("os.path.join(os.path.dirname(__file__), '..', '..', 'x.yaml')", "a/b.py") is None
