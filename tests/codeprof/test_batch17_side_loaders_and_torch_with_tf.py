"""Two ways a plain PyTorch job's batch was misread: a loader built for a side computation (dataset statistics,
pictures) taken for the training loader, and a torch training loop that imports TensorFlow for its file I/O
read with TensorFlow's batch conventions."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code

from .codeprof_support import make_job

STATS_HELPER = """
    import torch

    def dataset_mean_and_std(ds):
        loader = torch.utils.data.DataLoader(ds, batch_size=1, shuffle=False)
        return loader
"""

TRAIN_WITH_HELPER = """
    import argparse
    import torch
    from helpers import dataset_mean_and_std
    from mylib.data import make_pipeline

    p = argparse.ArgumentParser()
    p.add_argument("--batch-size", type=int, default=48)
    p.add_argument("--epochs", type=int, default=30)
    args = p.parse_args()
    net = torch.nn.Linear(8, 2).cuda()
    loader = make_pipeline("/data/shards", batch_size=args.batch_size)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(net(x.cuda()), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()
"""

PICTURE_LOADER = """
    import argparse
    import torch

    class Runner:
        def __init__(self, dataset, train_batch_size):
            self.loader = torch.utils.data.DataLoader(dataset, batch_size=train_batch_size, shuffle=True)
            self.loader_vis = iter(torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=True))

    p = argparse.ArgumentParser()
    p.add_argument("--batch_size", type=int, default=20)
    args = p.parse_args()
    net = torch.nn.Linear(3, 3).cuda()
    runner = Runner(list(range(100)), args.batch_size)
    for x in runner.loader:
        net(x.float().cuda()).sum().backward()
"""

TORCH_WITH_TF_IO = """
    import argparse
    try:
        import tensorflow as tf
    except ImportError:
        pass
    import torch

    p = argparse.ArgumentParser()
    p.add_argument("-b", "--batch-size", type=int, default=96)
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--local_rank", type=int, default=0)
    args = p.parse_args()
    torch.distributed.init_process_group("nccl")
    if tf.io.gfile.exists("/tmp/run_backup"):
        tf.io.gfile.copy("/tmp/run_backup/a.txt", "/tmp/b.txt", overwrite=True)
    net = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4).cuda(), device_ids=[args.local_rank])
    opt = torch.optim.AdamW(net.parameters())
    for epoch in range(args.epochs):
        x = torch.randn(args.batch_size, 4).cuda()
        loss = net(x).sum()
        loss.backward()
        opt.step()
"""

KERAS_WITH_TORCH_IMPORT = """
    import tensorflow as tf
    import torch

    BATCH = 64
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
        model.compile(optimizer="adam", loss="mse")
    x = torch.randn(640, 4).numpy()
    model.fit(x, x[:, :1], batch_size=BATCH, epochs=3)
"""


def test_a_statistics_helpers_one_sample_loader_is_not_the_training_batch(tmp_path):
    make_job(tmp_path, {"helpers.py": STATS_HELPER, "train.py": TRAIN_WITH_HELPER})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("micro_batch_size") == 48


def test_a_loader_bound_to_a_picture_name_is_not_the_training_loader(tmp_path):
    make_job(tmp_path, {"train.py": PICTURE_LOADER})
    res = analyze_code(tmp_path, "python train.py --batch_size 12", use_llm=False)
    assert res.value("micro_batch_size") == 12


def test_the_one_sample_loader_still_counts_when_it_is_the_only_training_loader(tmp_path):
    make_job(tmp_path, {"train.py": PICTURE_LOADER.replace("self.loader_vis", "self.loader_two")
                        .replace("for x in runner.loader:", "for x in runner.loader_two:")
                        .replace("batch_size=train_batch_size, ", "")})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("micro_batch_size") == 1  # a loader the job trains on is kept, whatever its batch


def test_a_torch_loop_importing_tensorflow_for_files_keeps_the_per_process_batch(tmp_path):
    make_job(tmp_path, {"train.py": TORCH_WITH_TF_IO})
    res = analyze_code(tmp_path, "torchrun --nproc_per_node=4 train.py -b 32", use_llm=False)
    assert res.value("num_gpus") == 4
    assert res.value("micro_batch_size") == 32
    assert res.value("global_batch_size") == 128


def test_a_keras_job_that_imports_torch_keeps_tensorflow_conventions(tmp_path):
    make_job(tmp_path, {"train.py": KERAS_WITH_TORCH_IMPORT})
    res = analyze_code(tmp_path, "python train.py", use_llm=False)
    assert res.value("framework") == "tensorflow"
    assert res.value("global_batch_size") == 64  # the strategy splits the fit batch over every visible GPU
    assert res.value("micro_batch_size") is None
