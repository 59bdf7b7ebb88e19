"""Every ```python block in docs/ runs (in order, one namespace per file) without error."""
import contextlib
import io
import re
from pathlib import Path

import pytest

DOCS = sorted((Path(__file__).resolve().parents[2] / "docs").glob("*.md"))


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_code_blocks_run(path):
    blocks = re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)
    namespace = {"__name__": f"docs_{path.stem}"}
    with contextlib.redirect_stdout(io.StringIO()):
        for i, block in enumerate(blocks):
            exec(compile(block, f"{path.name}[block {i}]", "exec"), namespace)  # noqa: S102
