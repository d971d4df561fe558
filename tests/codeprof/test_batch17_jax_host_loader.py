"""A JAX job fed by a host-side loader shards the loader's batch over its local devices: with one process the
loader's batch is the global batch, and the per-device batch is null until the device count is known."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

PMAP_JOB = """
    import argparse
    import jax
    import jax.numpy as jnp
    import torch

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=512)
    p.add_argument("--epochs", type=int, default=40)
    args = p.parse_args()

    host_batch = args.batch_size // jax.process_count()
    n_local = jax.local_device_count()
    loader = torch.utils.data.DataLoader(list(range(10000)), batch_size=host_batch, drop_last=True)

    @jax.pmap
    def train_step(state, batch):
        return state, jnp.mean(batch)

    for epoch in range(args.epochs):
        for batch in loader:
            batch = jnp.asarray(batch).reshape(n_local, -1)
            train_step(None, batch)
"""

ONE_DEVICE_JOB = """
    import argparse
    import jax
    import jax.numpy as jnp
    import torch

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=64)
    args = p.parse_args()
    loader = torch.utils.data.DataLoader(list(range(1000)), batch_size=args.batch_size)

    @jax.jit
    def train_step(params, batch):
        return params, jax.grad(lambda q: jnp.sum(q * batch))(params)

    for batch in loader:
        train_step(jnp.ones(()), jnp.asarray(batch))
"""


def test_a_pmap_jobs_loader_batch_is_the_global_batch_and_the_device_share_stays_open(tmp_path):
    make_job(tmp_path, {"train.py": PMAP_JOB})
    res = analyze_code(tmp_path, "python train.py --batch_size 1024", use_llm=False)
    assert res.value("framework") == "jax"
    assert res.value("global_batch_size") == 1024
    assert res.value("micro_batch_size") is None


def test_a_pmap_jobs_device_share_is_read_when_the_job_makes_two_gpus_visible(tmp_path):
    make_job(tmp_path, {"train.py": PMAP_JOB})
    res = analyze_code(tmp_path, "CUDA_VISIBLE_DEVICES=0,1 python train.py", use_llm=False)
    assert res.value("global_batch_size") == 512
    assert res.value("micro_batch_size") == 256


def test_a_one_device_jax_jobs_loader_batch_is_its_micro_batch(tmp_path):
    make_job(tmp_path, {"train.py": ONE_DEVICE_JOB})
    res = analyze_code(tmp_path, "python train.py --batch_size 32", use_llm=False)
    assert res.value("micro_batch_size") == 32
