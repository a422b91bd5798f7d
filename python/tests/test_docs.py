"""The Python examples of the README and docs/pytorch.md, run as written: each ```python block executes on its own,
on the CPU (and on CUDA where the block picks it), against the installed package. An example that stops working fails
here, not in a reader's hands."""

import os
import re

import pytest
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir)
DOCS = ["README.md", os.path.join("docs", "pytorch.md")]


def _blocks():
    for doc in DOCS:
        with open(os.path.join(ROOT, doc)) as f:
            text = f.read()
        for m in re.finditer(r"^```python\n(.*?)^```$", text, re.S | re.M):
            line = text.count("\n", 0, m.start()) + 1
            yield pytest.param(m.group(1), id=f"{doc}:{line}")


BLOCKS = list(_blocks())


def test_the_docs_have_python_examples():
    assert len(BLOCKS) >= 2, [b.id for b in BLOCKS]


@pytest.mark.parametrize("code", BLOCKS)
def test_python_example_runs(code):
    namespace = {"__name__": "__docs__"}
    exec(compile(code, "<docs>", "exec"), namespace)
    loss = namespace.get("loss")
    if isinstance(loss, torch.Tensor):
        assert torch.isfinite(loss).all(), loss
