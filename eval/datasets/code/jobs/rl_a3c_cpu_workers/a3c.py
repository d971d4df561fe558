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
