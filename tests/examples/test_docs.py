"""Every ```python block of every file in docs/ runs, and prints what the docs say it prints.

Each file runs in a fresh interpreter (a subprocess: MPI, eager mode, seeds and other
process-wide state stay out of the test process) whose working directory is a temporary
one; its ```python blocks run in order, in one namespace. A ```text block right after a
```python block is that block's output: what the block prints must equal it. Shell commands
are ```bash blocks and are not run; no other kind of fence is allowed, so nothing that looks
like code goes untested. Each block is registered with `linecache` under the name
`docs/<file>.md[block N]`, so AutoGraph can read the source of functions defined in it and
tracebacks show the doc's lines.

Run one file by hand: `python tests/examples/test_docs.py docs/autograph.md`.
"""
import contextlib
import io
import linecache
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```\s*$", flags=re.S | re.M)
LANGUAGES = {"python", "bash", "text"}


def fences(text):
    """[(language, body)] of the fenced blocks, in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def run_file(path):
    """Runs the python blocks of `path` in order in one namespace; checks their ```text outputs."""
    path = Path(path)
    blocks = fences(path.read_text())
    namespace = {"__name__": "__main__"}
    for i, (language, code) in enumerate(blocks):
        if language != "python":
            continue
        name = f"docs/{path.name}[block {i}]"
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, name, "exec"), namespace)  # noqa: S102 -- the docs' own code
        expected = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        if expected is not None:
            got = [line.rstrip() for line in out.getvalue().rstrip().splitlines()]
            want = [line.rstrip() for line in expected.rstrip().splitlines()]
            assert got == want, (f"{name} printed:\n" + "\n".join(got) +
                                 "\nbut the ```text block after it says:\n" + "\n".join(want))


def test_docs_exist_and_fences_are_labelled():
    names = {p.name for p in DOCS}
    assert {"getting-started.md", "graphs-and-functions.md", "training-loop.md", "autograph.md",
            "performance.md", "examples.md", "distributed.md"} <= names
    for path in DOCS:
        text = path.read_text()
        languages = {language for language, _ in fences(text)}
        assert languages <= LANGUAGES, f"{path.name}: fences {languages - LANGUAGES} (use python/bash/text)"
        assert text.count("```") == 2 * len(fences(text)), f"{path.name}: an unmatched ``` fence"


@pytest.mark.parametrize("path", DOCS, ids=[p.name for p in DOCS])
def test_code_blocks_run(path, tmp_path):
    if "```python" not in path.read_text():
        pytest.skip("no python blocks")
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-4000:]


if __name__ == "__main__":
    run_file(sys.argv[1])
