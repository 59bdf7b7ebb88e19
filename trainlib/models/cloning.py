"""`clone_model`: a new model of the same architecture with new layers (and new weights).

Owns: cloning a Sequential (its layers, its Input), a functional model (its
layer graph replayed on new Inputs with cloned layers, optionally through a
`call_function`), and a subclassed model (`from_config(get_config())`), as
Keras 3's `keras.models.clone_model` does.
Invariant: the clone shares no layer or Variable with the original (unless
`clone_function` returns the original layer); its weights are freshly initialized.
"""
from ..graph.nest import flatten, map_structure, pack_as
from ..layers.base import Input, InputLayer, KerasTensor
from .functional import Functional
from .sequential import Sequential

__all__ = ["clone_model"]


def _clone_layer(layer):
    return type(layer).from_config(layer.get_config())


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """A copy of `model`'s architecture with new layers, as Keras 3's `clone_model`.

    Args:
        model: a Sequential, functional or subclassed model.
        input_tensors: new `Input`s to build a functional / Sequential clone on.
        clone_function: `layer -> new layer` (default: `from_config(get_config())`).
        call_function: `(layer, *args, **kwargs) -> outputs`, how a functional clone calls
            each cloned layer (default: calls it).
        recursive: clone nested models layer by layer with the same functions.

    Returns:
        The new model (not compiled; weights newly initialized).

    Raises:
        ValueError: for unexpected keyword arguments or a clone of another architecture.

    Example:
        >>> clone = tl.models.clone_model(model)
        >>> clone.set_weights(model.get_weights())
    """
    if kwargs:
        raise ValueError(f"Unexpected keyword argument(s) to clone_model: {sorted(kwargs)}")
    clone_function = clone_function or _clone_layer

    def clone(layer):
        if recursive and isinstance(layer, (Sequential, Functional)):
            return clone_model(layer, clone_function=clone_function, call_function=call_function,
                               recursive=True)
        return clone_function(layer)

    if isinstance(model, Sequential):
        layers = [clone(layer) for layer in model.layers]
        if input_tensors is not None:
            first = flatten(input_tensors)
            if len(first) != 1:
                raise ValueError(f"A Sequential clone takes one input tensor, got {len(first)}")
            head = [first[0]]
        elif model._input_layer is not None:
            source = model._input_layer
            head = [InputLayer(batch_shape=source.batch_shape, dtype=source.dtype,
                               name=source.name)]
        else:
            head = []
        return Sequential(head + layers, trainable=model.trainable, name=model.name)
    if isinstance(model, Functional):
        return _clone_functional(model, input_tensors, clone, call_function)
    return type(model).from_config(model.get_config())


def _clone_functional(model, input_tensors, clone, call_function):
    old_inputs = model._flat_inputs
    if input_tensors is not None:
        new_inputs = flatten(input_tensors)
        if len(new_inputs) != len(old_inputs):
            raise ValueError(f"The model has {len(old_inputs)} inputs, input_tensors has "
                             f"{len(new_inputs)}")
    else:
        new_inputs = [Input(batch_shape=tuple(kt.shape), dtype=kt.dtype, name=kt.layer.name)
                      for kt in old_inputs]
    values = {id(old): new for old, new in zip(old_inputs, new_inputs)}
    cloned = {}
    for node in model._nodes:
        layer = node.layer
        if id(layer) not in cloned:
            cloned[id(layer)] = clone(layer)
        new_layer = cloned[id(layer)]
        def value_of(a):
            return values[id(a)] if isinstance(a, KerasTensor) else a

        args = tuple(map_structure(value_of, a) for a in node.args)
        kwargs = {k: map_structure(value_of, v) for k, v in node.kwargs.items()}
        if call_function is not None:
            out = call_function(new_layer, *args, **kwargs)
        else:
            out = new_layer(*args, **kwargs)
        for old, new in zip(flatten(node.outputs), flatten(out)):
            values[id(old)] = new
    inputs = pack_as(model._inputs_struct, new_inputs)
    outputs = pack_as(model._outputs_struct, [values[id(kt)] for kt in model._flat_outputs])
    try:
        return type(model)(inputs, outputs, name=model.name, trainable=model.trainable)
    except TypeError:   # a subclass whose constructor takes other arguments
        return Functional(inputs, outputs, name=model.name, trainable=model.trainable)
