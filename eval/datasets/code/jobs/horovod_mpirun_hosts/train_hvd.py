"""ResNet training with Horovod (one MPI rank per GPU)."""
import argparse

import horovod.torch as hvd
import torch
import torch.nn.functional as F
import torchvision
from torchvision import datasets, transforms

parser = argparse.ArgumentParser()
parser.add_argument("--arch", default="resnet101")
parser.add_argument("--batch-size", type=int, default=32, help="input batch size per GPU")
parser.add_argument("--epochs", type=int, default=90)
parser.add_argument("--fp16-allreduce", action="store_true", help="compress gradients to fp16 for the allreduce")
args = parser.parse_args()

hvd.init()
torch.cuda.set_device(hvd.local_rank())
train_dataset = datasets.ImageFolder("/data/imagenet/train", transforms.Compose([transforms.RandomResizedCrop(224),
                                                                                 transforms.ToTensor()]))
sampler = torch.utils.data.distributed.DistributedSampler(train_dataset, num_replicas=hvd.size(), rank=hvd.rank())
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=args.batch_size, sampler=sampler)
model = getattr(torchvision.models, args.arch)().cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.0125 * hvd.size(), momentum=0.9)
compression = hvd.Compression.fp16 if args.fp16_allreduce else hvd.Compression.none
optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(), compression=compression)
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
for epoch in range(args.epochs):
    for data, target in train_loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(data.cuda()), target.cuda())
        loss.backward()
        optimizer.step()
