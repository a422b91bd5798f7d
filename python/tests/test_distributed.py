"""The family under torch.distributed: two processes (gloo, CPU tensors), each with an uneven shard of the batch, reduce
their local loss with the normalizer set to the global count (summed with all_reduce); the losses summed over the
ranks equal the mean over the whole batch in one process, and so do the model's gradients summed over the ranks, for
each loss of the family. Also runs examples/torch_distributed.py, the data-parallel example."""

import os
import subprocess
import sys
import tempfile

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import softmargin

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "examples",
                       "torch_distributed.py")
ROWS = (5, 11)  # the ranks' shards: uneven, so that a local mean would weigh them wrongly
LOSSES = ["soft_margin", "soft_margin_weight", "bce_with_logits", "pairwise"]


def _batch(seed):
    g = torch.Generator().manual_seed(seed)
    n = sum(ROWS)
    return {"x": torch.randn(n, 8, generator=g, dtype=torch.float64),
            "x2": torch.randn(n, 8, generator=g, dtype=torch.float64),
            "sign": torch.randint(0, 2, (n, 3), generator=g).double() * 2 - 1,
            "label": torch.rand(n, 3, generator=g, dtype=torch.float64),
            "weight": torch.rand(n, 3, generator=g, dtype=torch.float64) + 0.5,
            "pos_weight": torch.rand(3, generator=g, dtype=torch.float64) * 3,
            "margin": torch.rand(n, 3, generator=g, dtype=torch.float64)}


def _loss(name, model, b, normalizer):
    out = model(b["x"])
    if name == "soft_margin":
        return softmargin.soft_margin_loss(out, b["sign"], normalizer=normalizer)
    if name == "soft_margin_weight":
        return softmargin.soft_margin_loss(out, b["sign"], weight=b["weight"], normalizer=normalizer)
    if name == "bce_with_logits":
        return softmargin.binary_cross_entropy_with_logits(out, b["label"], b["weight"], pos_weight=b["pos_weight"],
                                                           normalizer=normalizer)
    return softmargin.pairwise_logistic_loss(out, model(b["x2"]), b["margin"], normalizer=normalizer)


def _model(seed):
    torch.manual_seed(seed)
    return torch.nn.Linear(8, 3, dtype=torch.float64)


def _worker(rank, world, init_file, seed):
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    try:
        batch = _batch(seed)
        start = sum(ROWS[:rank])
        shard = {k: (v[start:start + ROWS[rank]] if v.dim() == 2 else v) for k, v in batch.items()}
        for name in LOSSES:
            # one process over the whole batch: the mean
            whole = _model(seed)
            expected = _loss(name, whole, batch, None)
            expected.backward()
            # this rank's shard, divided by the global count of loss elements
            model = _model(seed)
            count = torch.tensor(shard["sign"].numel(), dtype=torch.int64)
            dist.all_reduce(count)
            assert count.item() == batch["sign"].numel()
            loss = _loss(name, model, shard, count)
            loss.backward()
            total = loss.detach().clone()
            dist.all_reduce(total)
            torch.testing.assert_close(total, expected.detach(), rtol=1e-12, atol=0, msg=f"{name}: loss")
            for p, q in zip(model.parameters(), whole.parameters()):
                dist.all_reduce(p.grad)
                torch.testing.assert_close(p.grad, q.grad, rtol=1e-11, atol=1e-14, msg=f"{name}: gradient")
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="torch without gloo")
def test_two_ranks_equal_one_process(seed):
    with tempfile.TemporaryDirectory() as tmp:
        mp.spawn(_worker, args=(2, os.path.join(tmp, "init"), seed), nprocs=2, join=True)


@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="torch without gloo")
def test_example_runs():
    result = subprocess.run([sys.executable, EXAMPLE, "--steps", "30"], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("step")]
    assert len(lines) >= 2, result.stdout
    first, last = float(lines[0].split()[-1]), float(lines[-1].split()[-1])
    assert last < first, result.stdout  # the reward model learns the preferences
