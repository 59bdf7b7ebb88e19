"""Every op of trainlib, each defined once (OpDef) and registered on import.

Modules: math (elementwise, matmul, reductions, comparisons), array (creation,
shapes, indexing), linalg (matrix ops), nn, random, state (Variable reads/writes), io (print,
asserts), control_flow (If, While), iterator (dataset iterators as graph state),
operators (Tensor's Python operators), strings (tl.strings), ragged (tl.RaggedTensor).
"""
from . import array, bitwise, control_flow, io, math, nn, random, state  # noqa: F401 -- registration
from . import linalg  # noqa: F401 -- registration; tl.linalg
from . import normalization  # noqa: F401 -- LayerNorm
from . import fused  # noqa: F401 -- FusedElementwise, built by the fusion pass
from . import tensor_array  # noqa: F401 -- TensorArrayWrite; tl.TensorArray
from . import iterator  # noqa: F401 -- dataset iterators as graph state
from . import lookup  # noqa: F401 -- hash-table resources; tl.lookup
from . import sets  # noqa: F401 -- tl.sets
from . import ragged, sparse, strings  # noqa: F401 -- tl.RaggedTensor, tl.ragged, tl.sparse, tl.strings
from . import operators  # noqa: F401 -- installs +, -, @, [] ... on tensors
from . import complex, numeric, segment, decompositions, stateless_random  # noqa: F401 -- registration
from . import audio, image_io  # noqa: F401 -- host ops of tl.audio and the image files
