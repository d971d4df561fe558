"""An epoch-based run over a dataset whose size its name fixes (torchvision's CIFAR-10 has 50,000 training
images) has a known step count; a dataset read from disk does not."""

from __future__ import annotations

from schedmate.codeprof.analyzer import analyze_code
from tests.codeprof.codeprof_support import make_job

ONE_GPU = """
    import torch
    import torchvision
    import torchvision.transforms as T

    device = 'cuda'
    train_set = torchvision.datasets.CIFAR100(root='./data', train=True, download=True, transform=T.ToTensor())
    train_loader = torch.utils.data.DataLoader(train_set, batch_size={batch}, shuffle=True{extra})
    test_set = torchvision.datasets.CIFAR100(root='./data', train=False, download=True)
    test_loader = torch.utils.data.DataLoader(test_set, batch_size=500)
    net = WideNet().to(device)
    for epoch in range(60):
        for x, y in train_loader:
            pass
"""


def test_epochs_over_a_named_dataset_become_steps_on_one_gpu(tmp_path):
    make_job(tmp_path, {"train_wide.py": ONE_GPU.format(batch=64, extra="")})
    f = analyze_code(tmp_path, "python train_wide.py", use_llm=False).facts
    assert f["epochs"].value == 60
    assert f["train_steps"].value == 782 * 60  # ceil(50000 / 64) batches per epoch


def test_drop_last_rounds_the_epoch_down(tmp_path):
    make_job(tmp_path, {"train_wide.py": ONE_GPU.format(batch=64, extra=", drop_last=True")})
    f = analyze_code(tmp_path, "python train_wide.py", use_llm=False).facts
    assert f["train_steps"].value == 781 * 60


def test_a_distributed_sampler_splits_the_named_dataset_over_the_processes(tmp_path):
    make_job(tmp_path, {"ddp_mnist.py": """
        import torch
        from torch.utils.data import DataLoader
        from torch.utils.data.distributed import DistributedSampler
        from torchvision import datasets

        torch.distributed.init_process_group('nccl')
        train_data = datasets.MNIST('data', train=True, download=True)
        sampler = DistributedSampler(train_data)
        loader = DataLoader(train_data, batch_size=100, sampler=sampler)
        model = torch.nn.parallel.DistributedDataParallel(Net().cuda())
        for epoch in range(8):
            sampler.set_epoch(epoch)
    """})
    f = analyze_code(tmp_path, "torchrun --nproc_per_node=3 ddp_mnist.py", use_llm=False).facts
    assert f["num_gpus"].value == 3
    assert f["train_steps"].value == 200 * 8  # ceil(60000 / 3) = 20000 samples per process / 100


def test_a_dataset_read_from_disk_leaves_the_steps_open(tmp_path):
    make_job(tmp_path, {"train_folder.py": """
        import torch
        from torchvision import datasets
        train_set = datasets.ImageFolder('/data/train')
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=32, shuffle=True)
        model = Net().cuda()
        for epoch in range(12):
            pass
    """})
    f = analyze_code(tmp_path, "python train_folder.py", use_llm=False).facts
    assert f["epochs"].value == 12
    assert "train_steps" not in f
