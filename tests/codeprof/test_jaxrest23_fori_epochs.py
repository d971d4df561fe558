"""Epochs made of a fixed number of updates run by `jax.lax.fori_loop` (static/fori_epochs.py), on fixtures
written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

OFFLINE = '''
import argparse
from functools import partial

import jax
import jax.numpy as jnp


def refresh_params(i, carry, batch_size):
    return carry


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--updates_per_round", type=int, default=250)
    p.add_argument("--batch_size", type=int, default=512)
    args = p.parse_args()
    carry = {"w": jnp.zeros(3)}
    for epoch in range(args.rounds):
        carry = jax.lax.fori_loop(
            lower=0,
            upper=args.updates_per_round,
            body_fun=partial(refresh_params, batch_size=args.batch_size),
            init_val=carry,
        )


if __name__ == "__main__":
    main()
'''


def test_epochs_of_fixed_fori_update_blocks_are_a_step_count(tmp_path: Path) -> None:
    body = OFFLINE.replace("refresh_params", "update_params")
    job = make_job(tmp_path, {"offline.py": body})
    prof = analyze_code(job, command="python offline.py --rounds 30", use_llm=False)
    assert prof.value("train_steps") == 30 * 250
    assert prof.value("epochs") is None


def test_a_fori_loop_whose_body_is_not_an_update_says_nothing(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"offline.py": OFFLINE})
    prof = analyze_code(job, command="python offline.py --rounds 30", use_llm=False)
    assert prof.value("train_steps") is None
