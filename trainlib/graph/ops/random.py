"""Random ops: uniform, normal, truncated normal draws, seeded by `tl.random.set_seed`.

Owns: the random OpDefs (stateful: a graph draws fresh values on every call)
and the per-array-module generator they draw from.
"""
