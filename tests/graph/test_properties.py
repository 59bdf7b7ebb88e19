"""read_only: a one-line property that reads an attribute, or an attribute of an attribute."""
import pytest

from trainlib.graph.properties import read_only


class _Inner:
    def __init__(self):
        self.rank = 3


class _Holder:
    own = read_only("_own", "The holder's own value.")
    rank = read_only("inner.rank", "The inner object's rank.")

    def __init__(self, own):
        self._own = own
        self.inner = _Inner()


def test_reads_own_attribute_and_dotted_path():
    h = _Holder("x")
    assert h.own == "x"
    assert h.rank == 3
    h.inner.rank = 5  # read on every access, never cached
    assert h.rank == 5


def test_has_no_setter_and_carries_its_docstring():
    h = _Holder(1)
    with pytest.raises(AttributeError):
        h.own = 2
    assert _Holder.own.__doc__ == "The holder's own value."
    assert _Holder.rank.fset is None


def test_a_missing_attribute_raises_attribute_error():
    class Empty:
        value = read_only("_value", "Never set.")

    with pytest.raises(AttributeError, match="_value"):
        Empty().value
