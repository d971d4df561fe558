"""The framework is the one the job trains with: a torch training loop that imports TensorFlow for its
TensorBoard summaries, a `tf.data` pipeline or a TFRecord reader is a PyTorch job (its batch is per process),
while a Keras job that imports torch stays TensorFlow."""

from __future__ import annotations

import textwrap

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

TORCH_WITH_TF_RECORDS = """
    import argparse

    import tensorflow as tf
    import torch

    from trainer import Trainer

    p = argparse.ArgumentParser()
    p.add_argument("--per_device_batch", type=int, default=40)
    p.add_argument("--num_epochs", type=int, default=9)
    args = p.parse_args()
    torch.distributed.init_process_group("nccl")
    records = tf.data.TFRecordDataset(["shard-0.tfrecord"]).batch(args.per_device_batch)
    writer = tf.summary.create_file_writer("runs")
    net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4).cuda())
    Trainer(net, torch.optim.Adam(net.parameters())).fit(records, args.num_epochs)
"""

TORCH_TRAINER = """
    import torch


    class Trainer:
        def __init__(self, net, optimizer):
            self.net, self.optimizer = net, optimizer

        def train_step(self, batch):
            loss = self.net(torch.as_tensor(batch).cuda()).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()

        def fit(self, data, epochs):
            for _ in range(epochs):
                for batch in data:
                    self.train_step(batch)
"""

KERAS_WITH_TORCH_UTILS = """
    import tensorflow as tf
    import torch

    GLOBAL_BATCH = 256
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(3)])
        model.compile(optimizer="sgd", loss="mse")
    feats = torch.linspace(0, 1, 1024).reshape(-1, 4).numpy()
    model.fit(feats, feats[:, :3], batch_size=GLOBAL_BATCH, epochs=2)
"""


def test_a_torch_job_reading_tfrecords_with_tensorflow_is_ranked_pytorch(tmp_path):
    make_job(tmp_path, {"train.py": TORCH_WITH_TF_RECORDS, "trainer.py": TORCH_TRAINER})
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=8 train.py", use_llm=False)
    assert res.value("framework") == "pytorch"
    assert res.value("num_gpus") == 8
    assert res.value("micro_batch_size") == 40  # per process, as torch jobs count it
    assert res.value("global_batch_size") == 320


def test_a_torch_trainers_own_fit_method_is_not_keras_training(tmp_path):
    # the `fit` and `train_step` the job calls are methods of its torch Trainer, in a file without TensorFlow
    make_job(tmp_path, {"train.py": TORCH_WITH_TF_RECORDS, "trainer.py": TORCH_TRAINER})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("framework") == "pytorch"
    assert res.value("num_gpus") == 1


def test_a_keras_job_importing_torch_for_a_utility_stays_tensorflow(tmp_path):
    make_job(tmp_path, {"train.py": KERAS_WITH_TORCH_UTILS})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("framework") == "tensorflow"
    assert res.value("global_batch_size") == 256
    assert res.value("micro_batch_size") is None


def test_a_job_that_trains_both_ways_keeps_tensorflow_first(tmp_path):
    both = textwrap.dedent(TORCH_WITH_TF_RECORDS) + (
        "\nhead = tf.keras.layers.Dense(2)\nsgd = tf.keras.optimizers.SGD()\n"
        "with tf.GradientTape() as tape:\n    out = tf.reduce_sum(head(tf.ones([4, 16])))\n"
        "sgd.apply_gradients(zip(tape.gradient(out, head.trainable_variables), head.trainable_variables))\n")
    make_job(tmp_path, {"train.py": both, "trainer.py": TORCH_TRAINER})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("framework") == "tensorflow"
