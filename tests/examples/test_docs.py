"""The ```python blocks of the docs listed here run (in order, one namespace per file) without error.

Only the guides written to be executed are listed: docs/distributed.md shows
fragments (x, dataset, loss_fn undefined) that need an MPI launch.
"""
import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = [Path(__file__).resolve().parents[2] / "docs" / name for name in ("examples.md",)]


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_code_blocks_run(path):
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    namespace = {"__name__": f"docs_{path.stem}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for i, block in enumerate(blocks):
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)  # noqa: S102
