"""RL, recommenders, JAX, TensorFlow, Horovod/MPI and a diffusion job."""

from .common import job

PPO = '''
"""PPO on vectorised Atari-free control tasks (CleanRL-style single file)."""
import argparse
import random
import time

import gymnasium as gym
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--env-id", type=str, default="LunarLander-v2")
    parser.add_argument("--total-timesteps", type=int, default=5000000)
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=128, help="rollout length per env")
    parser.add_argument("--num-minibatches", type=int, default=4)
    parser.add_argument("--update-epochs", type=int, default=4)
    parser.add_argument("--cuda", action="store_true", default=True)
    args = parser.parse_args()
    args.batch_size = int(args.num_envs * args.num_steps)
    args.minibatch_size = int(args.batch_size // args.num_minibatches)
    args.num_iterations = args.total_timesteps // args.batch_size
    return args


class Agent(nn.Module):
    def __init__(self, obs_dim, n_actions):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 1))
        self.actor = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                                   nn.Linear(64, n_actions))

    def get_action_and_value(self, x, action=None):
        dist = Categorical(logits=self.actor(x))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(x)


if __name__ == "__main__":
    args = parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() and args.cuda else "cpu")
    envs = gym.vector.SyncVectorEnv([lambda: gym.make(args.env_id) for _ in range(args.num_envs)])
    agent = Agent(int(np.prod(envs.single_observation_space.shape)), envs.single_action_space.n).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs, _ = envs.reset(seed=1)
    for iteration in range(1, args.num_iterations + 1):
        for step in range(args.num_steps):
            with torch.no_grad():
                action, logprob, _, value = agent.get_action_and_value(torch.Tensor(obs).to(device))
            obs, reward, term, trunc, _ = envs.step(action.cpu().numpy())
        for epoch in range(args.update_epochs):
            loss = value.mean() - logprob.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
'''
job("rl_ppo_single_gpu",
    "python ppo.py --env-id CartPole-v1 --total-timesteps 2000000 --num-envs 16",
    {"ppo.py": PPO},
    notes="iterations computed in code: 2,000,000 // (16*128)",
    framework="pytorch", model_family="mlp",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, grad_accum_steps=1, train_steps=976,
    precision="fp32")

A3C = '''
"""Asynchronous advantage actor-critic with shared-memory workers (CPU only, Hogwild updates)."""
import argparse

import gymnasium as gym
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, n_obs, n_act, hidden=128):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(n_obs, hidden), nn.ReLU())
        self.pi, self.v = nn.Linear(hidden, n_act), nn.Linear(hidden, 1)

    def forward(self, x):
        h = self.body(x)
        return F.softmax(self.pi(h), -1), self.v(h)


def worker(rank, shared, opt, args):
    torch.manual_seed(args.seed + rank)
    env = gym.make(args.env)
    local = ActorCritic(4, 2)
    for episode in range(args.episodes):
        local.load_state_dict(shared.state_dict())
        obs, _ = env.reset()
        done = False
        while not done:
            probs, value = local(torch.tensor(obs, dtype=torch.float32))
            action = torch.multinomial(probs, 1).item()
            obs, reward, term, trunc, _ = env.step(action)
            done = term or trunc
        loss = -torch.log(probs[action]) * (reward - value.detach()) + (reward - value) ** 2
        opt.zero_grad()
        loss.sum().backward()
        for lp, sp in zip(local.parameters(), shared.parameters()):
            sp._grad = lp.grad
        opt.step()


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--episodes", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    shared = ActorCritic(4, 2)
    shared.share_memory()
    opt = torch.optim.Adam(shared.parameters(), lr=1e-4)
    procs = [mp.Process(target=worker, args=(r, shared, opt, args)) for r in range(args.workers)]
    [p.start() for p in procs]
    [p.join() for p in procs]
'''
job("rl_a3c_cpu_workers",
    "python a3c.py --workers 32 --episodes 5000",
    {"a3c.py": A3C},
    params=1027, framework="pytorch", model_family="mlp",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=0, num_gpus=0, grad_accum_steps=1, precision="fp32")

DLRM = '''
"""DLRM-style click-through-rate model with DDP; --batch-size is the GLOBAL batch, split over ranks."""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


class DLRM(nn.Module):
    def __init__(self, table_sizes, emb_dim=128):
        super().__init__()
        self.embs = nn.ModuleList(nn.EmbeddingBag(n, emb_dim, mode="sum") for n in table_sizes)
        self.bottom = nn.Sequential(nn.Linear(13, 512), nn.ReLU(), nn.Linear(512, emb_dim))
        self.top = nn.Sequential(nn.Linear(emb_dim * (len(table_sizes) + 1), 1024), nn.ReLU(), nn.Linear(1024, 1))

    def forward(self, dense, sparse):
        feats = [self.bottom(dense)] + [e(s) for e, s in zip(self.embs, sparse)]
        return self.top(torch.cat(feats, 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch-size", type=int, default=32768)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--emb-dim", type=int, default=128)
    args = ap.parse_args()
    dist.init_process_group("nccl")
    world_size = dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    model = DDP(DLRM([1_000_000] * 26, args.emb_dim).cuda(), device_ids=[local_rank])
    from criteo import CriteoDataset
    train_loader = torch.utils.data.DataLoader(CriteoDataset("/data/criteo"),
                                               batch_size=args.batch_size // world_size)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01)
    for epoch in range(args.epochs):
        for dense, sparse, y in train_loader:
            loss = nn.functional.binary_cross_entropy_with_logits(model(dense.cuda(), sparse), y.cuda())
            opt.zero_grad()
            loss.backward()
            opt.step()


if __name__ == "__main__":
    main()
'''
job("recsys_dlrm_global_batch",
    "torchrun --nnodes 2 --nproc_per_node 8 --rdzv_endpoint $MASTER:29500 train_dlrm.py --batch-size 65536",
    {"train_dlrm.py": DLRM},
    params=3331613825, framework="pytorch", model_family="dlrm",
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=4096,
    global_batch_size=65536, grad_accum_steps=1, epochs=1, precision="fp32")

NCF = '''
"""Neural collaborative filtering (NeuMF) on MovieLens, one GPU, bf16 autocast."""
import argparse

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from movielens import RatingsDataset


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, mf_dim=64, mlp_layers=(256, 128, 64)):
        super().__init__()
        self.mf_u, self.mf_i = nn.Embedding(n_users, mf_dim), nn.Embedding(n_items, mf_dim)
        self.mlp_u, self.mlp_i = nn.Embedding(n_users, mlp_layers[0] // 2), nn.Embedding(n_items, mlp_layers[0] // 2)
        self.mlp = nn.Sequential(nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU())
        self.out = nn.Linear(mf_dim + 64, 1)

    def forward(self, u, i):
        mf = self.mf_u(u) * self.mf_i(i)
        mlp = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], -1))
        return self.out(torch.cat([mf, mlp], -1)).squeeze(-1)


parser = argparse.ArgumentParser()
parser.add_argument("--batch_size", type=int, default=65536)
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--lr", type=float, default=0.0045)
args = parser.parse_args()

ds = RatingsDataset("data/ml-20m")
loader = DataLoader(ds, batch_size=args.batch_size, shuffle=True, num_workers=8)
model = NeuMF(ds.n_users, ds.n_items).cuda()
opt = torch.optim.Adam(model.parameters(), lr=args.lr)
for epoch in range(args.epochs):
    for u, i, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = nn.functional.binary_cross_entropy_with_logits(model(u.cuda(), i.cuda()), y.cuda())
        opt.zero_grad()
        loss.backward()
        opt.step()
'''
job("recsys_ncf_single_gpu",
    "python ncf.py --batch_size 1048576 --epochs 20",
    {"ncf.py": NCF,
     "movielens.py": "import torch\n\n\nclass RatingsDataset(torch.utils.data.Dataset):\n    n_users, n_items = 138493, 26744\n\n    def __init__(self, root):\n        self.root = root\n\n    def __len__(self):\n        return 20_000_263\n\n    def __getitem__(self, i):\n        return 0, 0, 1.0\n"},
    framework="pytorch", model_family="dlrm",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=1048576,
    global_batch_size=1048576, grad_accum_steps=1, epochs=20, precision="bf16")

FLAX = '''
"""Vision Transformer (ViT-B/16) with Flax, data parallel via jax.pmap over all local devices."""
import argparse
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state


class ViT(nn.Module):
    patch: int = 16
    hidden: int = 768
    depth: int = 12
    heads: int = 12
    num_classes: int = 1000
    dtype: jnp.dtype = jnp.bfloat16

    @nn.compact
    def __call__(self, x):
        x = nn.Conv(self.hidden, (self.patch, self.patch), strides=self.patch, dtype=self.dtype)(x)
        x = x.reshape(x.shape[0], -1, self.hidden)
        for _ in range(self.depth):
            y = nn.LayerNorm(dtype=self.dtype)(x)
            x = x + nn.SelfAttention(num_heads=self.heads, dtype=self.dtype)(y)
            x = x + nn.Dense(self.hidden, dtype=self.dtype)(nn.gelu(nn.Dense(4 * self.hidden, dtype=self.dtype)(x)))
        return nn.Dense(self.num_classes)(x.mean(1))


@functools.partial(jax.pmap, axis_name="batch")
def train_step(state, images, labels):
    def loss_fn(p):
        logits = state.apply_fn({"params": p}, images)
        return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    grads = jax.lax.pmean(jax.grad(loss_fn)(state.params), "batch")
    return state.apply_gradients(grads=grads)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per_device_batch_size", type=int, default=128)
    ap.add_argument("--num_epochs", type=int, default=90)
    args = ap.parse_args()
    n_dev = jax.local_device_count()
    model = ViT()
    params = model.init(jax.random.PRNGKey(0), jnp.ones((1, 224, 224, 3)))["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adamw(3e-4))
    state = jax.device_put_replicated(state, jax.local_devices())
    for epoch in range(args.num_epochs):
        images = jnp.zeros((n_dev, args.per_device_batch_size, 224, 224, 3))
        labels = jnp.zeros((n_dev, args.per_device_batch_size), jnp.int32)
        state = train_step(state, images, labels)


if __name__ == "__main__":
    main()
'''
job("jax_flax_vit_pmap",
    "python train_vit_flax.py --per_device_batch_size 64 --num_epochs 300",
    {"train_vit_flax.py": FLAX},
    notes="pmap over every local device: the GPU count is not fixed by the command",
    framework="jax", model_family="vit",
    parallelism={"data": "ddp"}, num_nodes=1, micro_batch_size=64, grad_accum_steps=1, epochs=300,
    precision="bf16")

KERAS = '''
"""ResNet-50 on ImageNet with tf.distribute.MirroredStrategy (one process, all visible GPUs)."""
import argparse

import tensorflow as tf
from tensorflow.keras import mixed_precision


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch_size_per_replica", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=90)
    args = ap.parse_args()
    mixed_precision.set_global_policy("mixed_float16")
    strategy = tf.distribute.MirroredStrategy()
    global_batch = args.batch_size_per_replica * strategy.num_replicas_in_sync
    ds = tf.keras.utils.image_dataset_from_directory("/data/imagenet/train", image_size=(224, 224),
                                                     batch_size=global_batch)
    with strategy.scope():
        model = tf.keras.applications.ResNet50(weights=None, classes=1000)
        model.compile(optimizer=tf.keras.optimizers.SGD(0.1, momentum=0.9),
                      loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(ds, epochs=args.epochs)


if __name__ == "__main__":
    main()
'''
job("tf_keras_resnet50_mirrored",
    "CUDA_VISIBLE_DEVICES=0,1,2,3 python train_keras.py --batch_size_per_replica 64 --epochs 30",
    {"train_keras.py": KERAS},
    framework="tensorflow", model_family="resnet", model_name="resnet50", params=25.6e6,
    parallelism={"data": "ddp"}, num_nodes=1, gpus_per_node=4, num_gpus=4, micro_batch_size=64,
    global_batch_size=256, grad_accum_steps=1, epochs=30, precision="fp16")

HVD = '''
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
'''
job("horovod_mpirun_hosts",
    "mpirun -np 16 -H node1:8,node2:8 -bind-to none -map-by slot -x NCCL_DEBUG=INFO -x LD_LIBRARY_PATH "
    "-mca pml ob1 -mca btl ^openib python train_hvd.py --batch-size 64 --fp16-allreduce",
    {"train_hvd.py": HVD},
    framework="pytorch", model_family="resnet", model_name="resnet101", params=44.5e6,
    parallelism={"data": "ddp"}, num_nodes=2, gpus_per_node=8, num_gpus=16, micro_batch_size=64,
    global_batch_size=1024, grad_accum_steps=1, epochs=90, precision="fp32",
    notes="--fp16-allreduce compresses gradients; training stays fp32")

job("horovod_mpirun_hostfile",
    "mpirun -np 32 --hostfile hostfile -npernode 8 python train_hvd.py --arch resnet50 --epochs 45",
    {"train_hvd.py": HVD, "hostfile": "gpu01 slots=8\ngpu02 slots=8\ngpu03 slots=8\ngpu04 slots=8\n"},
    framework="pytorch", model_family="resnet", model_name="resnet50", params=25.6e6,
    parallelism={"data": "ddp"}, num_nodes=4, gpus_per_node=8, num_gpus=32, micro_batch_size=32,
    global_batch_size=1024, grad_accum_steps=1, epochs=45, precision="fp32")

DIFFUSION = '''
"""Unconditional image diffusion (DDPM) with a UNet, Accelerate for mixed precision."""
import argparse

import torch
import torch.nn.functional as F
from accelerate import Accelerator
from diffusers import DDPMScheduler, UNet2DModel
from torch.utils.data import DataLoader

from flowers import FlowersDataset


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resolution", type=int, default=64)
    ap.add_argument("--train_batch_size", type=int, default=16)
    ap.add_argument("--num_epochs", type=int, default=100)
    ap.add_argument("--gradient_accumulation_steps", type=int, default=1)
    ap.add_argument("--mixed_precision", type=str, default="no", choices=["no", "fp16", "bf16"])
    args = ap.parse_args()
    accelerator = Accelerator(mixed_precision=args.mixed_precision,
                              gradient_accumulation_steps=args.gradient_accumulation_steps)
    model = UNet2DModel(sample_size=args.resolution, in_channels=3, out_channels=3,
                        block_out_channels=(128, 128, 256, 256, 512, 512))
    noise_scheduler = DDPMScheduler(num_train_timesteps=1000)
    dl = DataLoader(FlowersDataset(args.resolution), batch_size=args.train_batch_size, shuffle=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model, opt, dl = accelerator.prepare(model, opt, dl)
    for epoch in range(args.num_epochs):
        for clean in dl:
            noise = torch.randn_like(clean)
            t = torch.randint(0, 1000, (clean.shape[0],), device=clean.device)
            with accelerator.accumulate(model):
                pred = model(noise_scheduler.add_noise(clean, noise, t), t).sample
                loss = F.mse_loss(pred, noise)
                accelerator.backward(loss)
                opt.step()
                opt.zero_grad()


if __name__ == "__main__":
    main()
'''
job("diffusion_unet_single_gpu_accelerate",
    "python train_ddpm.py --train_batch_size 32 --num_epochs 50 --mixed_precision fp16",
    {"train_ddpm.py": DIFFUSION,
     "flowers.py": "import torch\n\n\nclass FlowersDataset(torch.utils.data.Dataset):\n    def __init__(self, res):\n        self.res = res\n\n    def __len__(self):\n        return 8189\n\n    def __getitem__(self, i):\n        return torch.zeros(3, self.res, self.res)\n"},
    framework="accelerate", model_family="unet",
    parallelism={"data": "none"}, num_nodes=1, gpus_per_node=1, num_gpus=1, micro_batch_size=32,
    global_batch_size=32, grad_accum_steps=1, epochs=50, precision="fp16")
