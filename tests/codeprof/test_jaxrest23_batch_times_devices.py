"""A per-device batch setting the input pipeline multiplies by the device count (static/batch_times_devices.py),
on fixtures written for these tests."""

from __future__ import annotations

from pathlib import Path

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

MAIN = '''
import argparse

import pipeline


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=48, help="Batch size.")
    p.add_argument("--epochs", type=int, default=12)
    args = p.parse_args()
    pipeline.run(args)


if __name__ == "__main__":
    main()
'''

PIPELINE = '''
import jax
import tensorflow as tf


def input_stream(ds, n_dev, batch_size):
    ds = ds.shuffle(1000)
    ds = ds.batch(batch_size={product})
    return ds.prefetch(2)


def run(config):
    n_dev = jax.device_count()
    ds = input_stream(tf.data.Dataset.range(100), n_dev, config.batch_size)
    step = jax.pmap(lambda x: x)
    for epoch in range(config.epochs):
        for batch in ds:
            step(batch)
'''


def test_a_batch_multiplied_by_the_device_count_is_a_device_batch(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"train.py": MAIN, "pipeline.py": PIPELINE.format(product="n_dev * batch_size")})
    prof = analyze_code(job, command="CUDA_VISIBLE_DEVICES=0,1,2 python train.py", use_llm=False)
    assert prof.value("micro_batch_size") == 48
    assert prof.value("global_batch_size") == 3 * 48


def test_a_pipeline_batch_without_the_device_count_stays_the_global_batch(tmp_path: Path) -> None:
    job = make_job(tmp_path, {"train.py": MAIN, "pipeline.py": PIPELINE.format(product="batch_size")})
    prof = analyze_code(job, command="CUDA_VISIBLE_DEVICES=0,1,2 python train.py", use_llm=False)
    assert prof.value("global_batch_size") == 48
    assert prof.value("micro_batch_size") == 16
