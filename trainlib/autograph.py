"""`tl.autograph`: AutoGraph's public names, as `tf.autograph`.

Re-exports only; the implementation is trainlib/graph/autograph/.
"""
import types as _types

from .graph.autograph import do_not_convert, set_loop_options, to_code  # noqa: F401

experimental = _types.SimpleNamespace(do_not_convert=do_not_convert, set_loop_options=set_loop_options)

__all__ = ["to_code", "experimental"]
