"""Data-parallel training of a tiny reward model with softmargin's pairwise logistic (Bradley-Terry) loss.

Each rank scores its own shard of preference pairs (of uneven size: the last micro-batch of an epoch, say) and
reduces its loss with the step's global pair count as the normalizer, a device tensor summed with all_reduce: the
gradients that DistributedDataParallel averages are then exactly those of the mean over every pair of the step, on
every rank, with no host synchronization for the count.

    python examples/torch_distributed.py                        # starts 2 CPU processes (gloo) itself
    torchrun --nproc_per_node=2 examples/torch_distributed.py   # or under torchrun (nccl where there are GPUs)
"""

import argparse
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

import softmargin


def preference_data(rank, world, steps, dim, seed=0):
    """Pairs (chosen, rejected) of feature vectors whose hidden preference is a fixed direction; rank r gets 48 + 16 r
    pairs a step."""
    g = torch.Generator().manual_seed(seed + rank)
    truth = torch.Generator().manual_seed(seed)
    direction = torch.randn(dim, generator=truth)
    pairs = 48 + 16 * rank
    for _ in range(steps):
        a, b = torch.randn(pairs, dim, generator=g), torch.randn(pairs, dim, generator=g)
        prefer_a = (a - b) @ direction > 0
        chosen = torch.where(prefer_a[:, None], a, b)
        rejected = torch.where(prefer_a[:, None], b, a)
        yield chosen, rejected


def train(rank, world, steps, device):
    torch.manual_seed(0)  # the same initial model on every rank
    dim = 16
    model = DistributedDataParallel(torch.nn.Sequential(torch.nn.Linear(dim, 32), torch.nn.Tanh(),
                                                        torch.nn.Linear(32, 1)).to(device))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    # DDP averages the gradients over the ranks: each rank's loss is its sum over the global count, times world, so
    # that the average is the gradient of the mean over every pair of the step.
    loss_fn = softmargin.PairwiseLogisticLoss(margin=0.1)
    for step, (chosen, rejected) in enumerate(preference_data(rank, world, steps, dim)):
        chosen, rejected = chosen.to(device), rejected.to(device)
        count = torch.tensor(chosen.shape[0], device=device)
        dist.all_reduce(count)  # the step's pairs on every rank, on the device
        rewards = model(torch.cat([chosen, rejected])).squeeze(-1)
        r_chosen, r_rejected = rewards.split(chosen.shape[0])
        loss = loss_fn(r_chosen, r_rejected, normalizer=count / world)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        mean_loss = loss.detach() / world
        dist.all_reduce(mean_loss)  # the mean over every pair of the step
        if rank == 0 and (step % 10 == 0 or step == steps - 1):
            print(f"step {step:4d}  loss {mean_loss.item():.4f}", flush=True)


def worker(rank, world, init_file, steps):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        train(rank, world, steps, "cpu")
    finally:
        dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    args = parser.parse_args()
    if "RANK" in os.environ:  # under torchrun
        use_cuda = torch.cuda.is_available()
        dist.init_process_group("nccl" if use_cuda else "gloo")
        rank = dist.get_rank()
        device = f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if use_cuda else "cpu"
        if use_cuda:
            torch.cuda.set_device(device)
        try:
            train(rank, dist.get_world_size(), args.steps, device)
        finally:
            dist.destroy_process_group()
        return
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(worker, args=(2, os.path.join(tmp, "init"), args.steps), nprocs=2, join=True)


if __name__ == "__main__":
    main()
