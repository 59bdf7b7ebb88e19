"""Neural-network ops (`tl.nn`): activations, cross-entropies, conv2d, pooling, dropout.

Owns: the OpDefs and public functions of `tl.nn`. Images are NHWC.
"""
