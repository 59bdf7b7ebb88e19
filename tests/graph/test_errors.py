"""`user_location`: it names the user's line, and what it remembers about files keeps no user code
object alive (a function deleted by the user is freed) and stays bounded."""
import gc
import linecache
import weakref

import pytest

import trainlib as tl
from trainlib.graph import errors


def _make_user_function(i, readable=False):
    """A function of its own code object (as one from a module the user unloads, or exec'd);
    `readable` registers its source so that AutoGraph converts it."""
    namespace = {"tl": tl}
    source = f"def user_fn_{i}(x):\n    return tl.reshape(x, [3])\n"
    filename = f"/virtual/user_module_{i}.py"
    if readable:
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace[f"user_fn_{i}"]


@pytest.mark.parametrize("readable", [False, True], ids=["unconverted", "converted"])
def test_a_user_code_object_is_freed_after_its_function_is_deleted(readable):
    fn = _make_user_function(0, readable)
    with pytest.raises(tl.errors.InvalidArgumentError, match=r"/virtual/user_module_0\.py:2"):
        fn(tl.ones([2]))  # the error names the user's line: user_location walked its frame
    traced = tl.function(fn)
    assert traced(tl.ones([3])).shape == (3,)  # tracing asks user_location for every op too
    code = weakref.ref(fn.__code__)
    del fn, traced
    gc.collect()
    linecache.cache.pop("/virtual/user_module_0.py", None)
    assert code() is None


def test_what_it_remembers_is_bounded(monkeypatch):
    monkeypatch.setattr(errors, "_LIBRARY_FILES_MAX", 50)
    for i in range(60):
        compile_fn = _make_user_function(i)
        with pytest.raises(tl.errors.InvalidArgumentError, match=rf"user_module_{i}\.py:2"):
            compile_fn(tl.ones([2]))
    assert len(errors._LIBRARY_FILES) <= errors._LIBRARY_FILES_MAX
