"""Python Fire entry points: the keyword defaults of the function `fire.Fire(...)` runs are the options, the
command line's `--name value` replaces them, and a bare `fire.Fire()` runs the function the command's first
word names."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from schedmate.codeprof.static.fire_cli import fire_defaults
from tests.codeprof.codeprof_support import make_job

LOOP = """
    import fire
    import torch
    from torch.utils.data import DataLoader

    def run(
        total_updates = int(2e4),
        batch_size = 12,
        accum_steps = 3,
        lr = 3e-4,
    ):
        model = TinyLM().cuda()
        opt = torch.optim.Adam(model.parameters(), lr = lr)
        loader = endless(DataLoader(CharSet(), batch_size = batch_size))
        for i in range(total_updates):
            for _ in range(accum_steps):
                (model(next(loader)) / accum_steps).backward()
            opt.step()
            opt.zero_grad()

    if __name__ == '__main__':
        fire.Fire(run)
"""


def value(facts: dict, field: str) -> object:
    return facts[field].value if field in facts else None


def test_the_keyword_defaults_of_the_fired_function_set_the_run(tmp_path):
    make_job(tmp_path, {"train_chars.py": LOOP})
    f = analyze_code(tmp_path, "python train_chars.py", use_llm=False).facts
    assert value(f, "train_steps") == 20000 and "train_chars.py:6" in f["train_steps"].evidence
    assert value(f, "micro_batch_size") == 12
    assert value(f, "global_batch_size") == 12 * 3  # the accumulation default counts too


def test_a_flag_on_the_command_line_replaces_the_fired_functions_default(tmp_path):
    make_job(tmp_path, {"train_chars.py": LOOP})
    f = analyze_code(tmp_path, "python train_chars.py --total_updates 500 --batch_size 8", use_llm=False).facts
    assert value(f, "train_steps") == 500
    assert value(f, "micro_batch_size") == 8


def test_a_bare_fire_runs_the_function_the_first_word_names():
    text = "import fire\n\ndef fit(rounds=7):\n    pass\n\ndef check(rounds=1):\n    pass\n\nfire.Fire()\n"
    assert [(k, v) for k, v, _ in fire_defaults(text, "fit")] == [("rounds", 7)]
    assert [(k, v) for k, v, _ in fire_defaults(text, "check")] == [("rounds", 1)]
    assert list(fire_defaults(text, None)) == []
    named = "import fire\n\ndef go(steps=5):\n    pass\n\nfire.Fire({'train': go})\n"
    assert [(k, v) for k, v, _ in fire_defaults(named, "train")] == [("steps", 5)]
