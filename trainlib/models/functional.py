"""Functional models: `tl.Model(inputs, outputs)` over the layer graph KerasTensors recorded.

Owns: collecting the nodes (layer calls) between the inputs and the outputs
in topological order, replaying them on real tensors in `call`, and the
config (layers plus which outputs feed which calls) for rebuilding.
Invariant: every layer is built when the model is made; `layers` lists the
input layers first, then each layer once in call order (the operations that
operators on KerasTensors add, `x + y`, `x[:, 0]`, run in the graph but are
not listed, as in Keras 3).
"""
from ..graph.nest import flatten, map_structure, pack_as
from ..layers import operators  # noqa: F401 -- registers the operations configs may name
from ..layers.base import InputLayer, KerasTensor, Layer, deserialize, register, set_keras_mask
from ..saving.object_registration import all_custom_objects
from ..saving.serialization_lib import deserialize_keras_object
from ..saving.serialization_lib import serialize_keras_object as serialize

from ..trainers.trainer import Trainer
from .model import Model, register_functional_api

__all__ = ["Functional", "functional_from_config"]


def _topological_nodes(inputs, outputs):
    input_ids = {id(t) for t in inputs}
    order, seen, visiting = [], set(), set()

    def visit(kt):
        if id(kt) in input_ids:
            return
        node = kt.node
        if node is None:
            raise ValueError(f"Output {kt} is not connected to the model's inputs: it comes from "
                             f"Input '{kt.name}' which is not in `inputs`")
        if id(node) in seen:
            return
        if id(node) in visiting:
            raise ValueError("The layer graph has a cycle")
        visiting.add(id(node))
        for x in flatten((node.args, node.kwargs)):
            if isinstance(x, KerasTensor):
                visit(x)
        visiting.discard(id(node))
        seen.add(id(node))
        order.append(node)

    for kt in outputs:
        visit(kt)
    return order


def _keras_layer_order(inputs, outputs):
    """The model's layers (InputLayers and operations included) in Keras 3's order, which is
    its weight order: by depth from the outputs, deepest first, ties broken by the order a
    depth-first walk from the outputs first meets them (Keras's `map_graph`)."""
    input_ids = {id(t) for t in inputs}
    finished, in_progress = set(), set()
    nodes = []            # post-order: from the inputs to the outputs
    first_seen = {}       # id(layer) -> traversal index
    layer_of, parents = {}, {}

    def key_of(kt):
        return ("input", id(kt.layer)) if kt.node is None else id(kt.node)

    def visit(kt):
        if kt.node is not None and id(kt) in input_ids:
            return            # an intermediate tensor given as input: its layer is outside
        key = key_of(kt)
        if key in finished:
            return
        layer = kt.layer if kt.node is None else kt.node.layer
        first_seen.setdefault(id(layer), len(first_seen))
        layer_of[key] = layer
        in_progress.add(key)
        parents[key] = []
        if kt.node is not None:
            for x in flatten((kt.node.args, kt.node.kwargs)):
                if isinstance(x, KerasTensor):
                    if not (x.node is not None and id(x) in input_ids):
                        parents[key].append(key_of(x))
                    visit(x)
        in_progress.discard(key)
        finished.add(key)
        nodes.append(key)

    for kt in outputs:
        visit(kt)
    node_depth, layer_depth = {}, {}
    for key in reversed(nodes):
        depth = max(node_depth.setdefault(key, 0), layer_depth.get(id(layer_of[key]), 0))
        layer_depth[id(layer_of[key])] = depth
        node_depth[key] = depth
        for parent in parents[key]:
            node_depth[parent] = max(depth + 1, node_depth.get(parent, 0))
    layers = {id(layer): layer for layer in layer_of.values()}
    for kt in inputs:     # inputs not connected to the outputs are listed too
        if kt.node is None and id(kt.layer) not in layer_depth:
            layers[id(kt.layer)], layer_depth[id(kt.layer)] = kt.layer, 0
            first_seen[id(kt.layer)] = -1
    order = sorted(layers, key=lambda i: (-layer_depth[i], first_seen[i]))
    return [layers[i] for i in order]


@register
class Functional(Model):
    """A model defined by calling layers on `tl.layers.Input`s (made by `tl.Model(inputs, outputs)`,
    also on a subclass of Model)."""

    _keras_module = "keras.src.models.functional"    # as Keras 3 serializes it
    _keras_registered_name = "Functional"

    def __init__(self, inputs, outputs, name=None, trainable=True, **kwargs):
        Layer.__init__(self, name=name, trainable=trainable, **kwargs)
        Trainer.__init__(self)
        flat_inputs, flat_outputs = flatten(inputs), flatten(outputs)
        for t in flat_inputs + flat_outputs:
            if not isinstance(t, KerasTensor):
                raise TypeError(f"Model(inputs, outputs) needs KerasTensors (from tl.layers.Input "
                                f"and layer calls), got {type(t).__name__}")
        nodes = _topological_nodes(flat_inputs, flat_outputs)
        self._layers = _keras_layer_order(flat_inputs, flat_outputs)  # the weight order
        self._nodes = nodes
        self._inputs_struct, self._outputs_struct = inputs, outputs
        self._flat_inputs, self._flat_outputs = flat_inputs, flat_outputs
        self._build_input_shape = [tuple(t.shape) for t in flat_inputs]
        self.built = True

    @property
    def layers(self):
        return [layer for layer in self._layers if not getattr(layer, "_is_operation", False)]

    @property
    def inputs(self):
        return list(self._flat_inputs)

    @property
    def outputs(self):
        return list(self._flat_outputs)

    @property
    def input_names(self):
        """The names of the input layers, in `inputs` order."""
        return [kt.layer.name for kt in self._flat_inputs]

    @property
    def output_names(self):
        """The names of the outputs (the keys of an output dict, else the output layers' names),
        which `compile`'s loss and metrics dicts and `fit`'s target dicts use."""
        if isinstance(self._outputs_struct, dict):
            return sorted(self._outputs_struct)
        return [kt.node.layer.name if kt.node is not None else kt.layer.name
                for kt in self._flat_outputs]

    def _standardize_inputs(self, inputs):
        """The flat input values: a dict keyed by input name (when the model's inputs are not a
        dict themselves), a list, a tuple or a single value."""
        if isinstance(inputs, dict) and not isinstance(self._inputs_struct, dict):
            names = self.input_names
            missing = [n for n in names if n not in inputs]
            if missing:
                raise ValueError(f"Model '{self.name}' got an input dict with keys "
                                 f"{sorted(inputs)}; it needs its inputs {names} (missing "
                                 f"{missing})")
            return [inputs[n] for n in names]
        return flatten(inputs)

    def call(self, inputs, training=False, mask=None):
        leaves = self._standardize_inputs(inputs)
        if mask is not None:    # as Keras: given masks travel on the inputs
            for x, m in zip(leaves, flatten(mask)):
                if m is not None:
                    set_keras_mask(x, m)
        if len(leaves) != len(self._flat_inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self._flat_inputs)} input(s), got "
                             f"{len(leaves)}")
        values = {id(kt): x for kt, x in zip(self._flat_inputs, leaves)}
        def value_of(a):
            return values[id(a)] if isinstance(a, KerasTensor) else a

        for node in self._nodes:
            args = tuple(map_structure(value_of, a) for a in node.args)
            kwargs = {k: map_structure(value_of, v) for k, v in node.kwargs.items()}
            out = node.layer(*args, **kwargs)
            for kt, value in zip(flatten(node.outputs), flatten(out)):
                values[id(kt)] = value
        return pack_as(self._outputs_struct, [values[id(kt)] for kt in self._flat_outputs])

    def _maybe_build(self, args, kwargs=None):
        pass

    # -- config: layers, and for each call which (layer, call, output) tensors feed it
    def _obj_type(self):
        return "Functional"

    def get_config(self):
        calls_of = {}
        for n in self._nodes:
            calls_of.setdefault(n.layer.name, []).append(n)

        def ref(kt):
            if isinstance(kt.layer, InputLayer) and kt.node is None:
                return [kt.layer.name, 0, 0]
            return [kt.node.layer.name, calls_of[kt.node.layer.name].index(kt.node), kt.index]

        def encode(value):
            # as Keras 3 writes call arguments: tensors by their history, anywhere in them
            if isinstance(value, KerasTensor):
                return {"class_name": "__keras_tensor__",
                        "config": {"shape": list(value.shape), "dtype": value.dtype,
                                   "keras_history": ref(value)}}
            if isinstance(value, (list, tuple)):
                return [encode(v) for v in value]
            if isinstance(value, dict):
                return {k: encode(v) for k, v in value.items()}
            return value

        layer_configs = []
        for layer in self._layers:
            inbound = []
            for n in calls_of.get(layer.name, []):
                args, kwargs = _keras_call_arguments(n)
                inbound.append({"args": encode(args), "kwargs": encode(kwargs)})
            config = serialize(layer)
            if getattr(layer, "_is_operation", False):   # operands travel as call arguments
                config["config"] = {"name": layer.name}
                config.pop("build_config", None)
            layer_configs.append({**config, "name": layer.name, "inbound_nodes": inbound})
        def model_ref(kt):
            # as Keras 3: in input_layers/output_layers, a nested Functional model's calls are
            # counted from 1 (Keras reserves node 0 of a Functional for its own graph)
            name, call, index = ref(kt)
            nested = kt.node is not None and isinstance(kt.node.layer, Functional)
            return [name, call + 1 if nested else call, index]

        def structure(struct, flat):
            # as Keras: one tensor is one reference, a dict of named tensors stays a dict (in
            # flatten, sorted-key, order), a list or tuple is a list
            if isinstance(struct, dict):
                return {k: model_ref(t) for k, t in zip(sorted(struct), flat)}
            if not isinstance(struct, (list, tuple)):
                return model_ref(flat[0])
            return [model_ref(t) for t in flat]

        return {"name": self.name, "trainable": self.trainable, "layers": layer_configs,
                "input_layers": structure(self._inputs_struct, self._flat_inputs),
                "output_layers": structure(self._outputs_struct, self._flat_outputs)}

    @classmethod
    def _from_config_custom(cls, config, custom_objects):
        return cls.from_config(config, custom_objects)


def _keras_call_arguments(node):
    """(args, kwargs) of a node as Keras 3 records the call: an operation's operands as
    positional arguments (`Add()(a, b)`, `Multiply()(x, 2)`, `GetItem()(x, key)`), which
    `_replay_operation` reads back."""
    layer = node.layer
    args, kwargs = list(node.args), dict(node.kwargs)
    if not getattr(layer, "_is_operation", False):
        if isinstance(layer, Model) and "mask" not in kwargs and len(args) == 1 and \
                all(getattr(t, "_keras_mask", None) is None for t in flatten(args[0])):
            kwargs["mask"] = None     # as Keras records a nested model's call without masks
        return args, kwargs
    first = args[0]
    if isinstance(layer, operators.GetItem):
        return [first, operators._encode_key(layer.key)], kwargs
    if isinstance(first, (list, tuple)):
        return list(first), kwargs
    constant = getattr(layer, "constant", None)
    if constant is not None:
        return ([constant, first] if layer.reverse else [first, constant]), kwargs
    return [first], kwargs


class _NotYet(Exception):
    """A call's input is produced by a call not yet replayed (the replay comes back to it)."""


def functional_from_config(cls, config, custom_objects=None):
    """A functional model of class `cls` rebuilt from a functional config: Keras 3's
    (`Functional.get_config`: arguments with `__keras_tensor__` entries, operations such as
    `a + b` with their operands as arguments), tf.keras 2's (each call a list of
    `[layer, node, tensor, kwargs]`) or trainlib's first one (refs with a `nested` flag)."""
    custom_objects = all_custom_objects(custom_objects)
    made = {}       # layer name -> layer
    produced = {}   # (layer name, call index) -> the call's flat outputs
    calls = {}      # layer name -> calls replayed
    layer_configs = config["layers"]
    nodes_of = [n for c in layer_configs for n in c.get("inbound_nodes") or []]
    own_format = any(isinstance(n, dict) and "nested" in n for n in nodes_of)
    for c in layer_configs:
        layer_config = {"module": c.get("module"), "class_name": c["class_name"],
                        "config": c["config"]}
        made[c["name"]] = deserialize(layer_config, custom_objects)

    def tensor(name, call, index, *_):
        layer = made.get(name)
        if layer is None:
            raise ValueError(f"Functional config names the unknown layer {name!r}")
        if isinstance(layer, InputLayer):
            if call != 0 or index != 0:   # an input has one call and one output
                raise ValueError(f"Functional config names the tensor [{name!r}, {call}, "
                                 f"{index}]: the input {name!r} has only [{name!r}, 0, 0]")
            return layer.output
        if (name, call) not in produced:
            raise _NotYet(name)
        outputs = produced[(name, call)]
        if not isinstance(index, int) or not 0 <= index < len(outputs):
            raise ValueError(f"Functional config names the tensor [{name!r}, {call}, {index!r}]"
                             f": call {call} of layer {name!r} has {len(outputs)} outputs")
        return outputs[index]

    def revive(value):
        """Keras 3's serialized call arguments with their KerasTensors found."""
        if isinstance(value, list):
            return [revive(v) for v in value]
        if isinstance(value, dict):
            if value.get("class_name") == "__keras_tensor__":
                return tensor(*value["config"]["keras_history"])
            if str(value.get("class_name")).startswith("__"):
                return value    # an index entry (`__slice__`...), decoded by the operation
            if "class_name" in value and "config" in value:
                return deserialize_keras_object(value, custom_objects)
            return {k: revive(v) for k, v in value.items()}
        return value

    def replay(name, node):
        layer = made[name]
        if isinstance(node, dict) and "nested" in node:   # trainlib's first format
            args = [tensor(*r) if r is not None else None for r in node["args"]]
            return _replay_first_format(layer, args if node["nested"] else args[0],
                                        node.get("kwargs") or {})
        if isinstance(node, list):      # tf.keras 2: [[layer, node, tensor, kwargs], ...]
            inputs = [tensor(*entry[:3]) for entry in node]
            kwargs = next((e[3] for e in node if len(e) > 3 and e[3]), {})
            return layer(inputs[0] if len(inputs) == 1 else inputs, **_call_kwargs(kwargs))
        args, kwargs = revive(node.get("args") or []), _call_kwargs(revive(node.get("kwargs")
                                                                          or {}))
        if getattr(layer, "_is_operation", False):
            return _replay_operation(layer, args)
        if getattr(layer, "_takes_input_list", False) and len(args) > 1:
            # Keras 3's legacy HDF5 configs drop `module`: its `a + b` operation reads back
            # as the Add merge layer, called on the operands
            return layer(list(args), **kwargs)
        return layer(*args, **kwargs)

    pending = [(c["name"], n) for c in layer_configs for n in c.get("inbound_nodes") or []]
    while pending:
        progress = False
        for item in list(pending):
            name, node = item
            if any(p[0] == name for p in pending[:pending.index(item)]):
                continue    # a layer's calls replay in their order
            try:
                out = replay(name, node)
            except _NotYet:
                continue
            produced[(name, calls.get(name, 0))] = flatten(out)
            calls[name] = calls.get(name, 0) + 1
            pending.remove(item)
            progress = True
        if not progress:
            raise ValueError("Functional config has calls whose inputs are never produced: "
                             f"{sorted({name for name, _ in pending})}")

    def model_tensor(name, call, index, *_):
        # Keras 3 counts a nested Functional model's calls from 1 in input/output references
        # (0 only in trainlib's files before it did the same)
        if isinstance(made.get(name), Functional) and call > 0:
            call -= 1
        return tensor(name, call, index)

    def rebuild(refs):
        if isinstance(refs, list) and len(refs) >= 3 and isinstance(refs[0], str):
            return model_tensor(*refs)
        if isinstance(refs, dict):
            return {k: rebuild(r) for k, r in refs.items()}
        return [rebuild(r) for r in refs]

    def rebuild_flat(refs, single):   # trainlib's own configs: flat lists and single_* flags
        if isinstance(refs, dict):
            return {k: tensor(*r) for k, r in refs.items()}
        tensors = [tensor(*r) for r in refs]
        return tensors[0] if single else tensors

    if "single_input" in config or "single_output" in config:
        inputs = rebuild_flat(config["input_layers"], config.get("single_input"))
        outputs = rebuild_flat(config["output_layers"], config.get("single_output"))
    else:
        inputs, outputs = rebuild(config["input_layers"]), rebuild(config["output_layers"])
        if any(isinstance(n, list) for n in nodes_of):
            # tf.keras 2 wrote every model's inputs and outputs as lists; one is one tensor
            inputs = inputs[0] if isinstance(inputs, list) and len(inputs) == 1 else inputs
            outputs = outputs[0] if isinstance(outputs, list) and len(outputs) == 1 else outputs
    return cls(inputs, outputs, name=config.get("name"), trainable=config.get("trainable", True))


def _call_kwargs(kwargs):
    # Keras records `mask=None` (and tf.keras 2 sometimes `training`) on calls that take them
    return {k: v for k, v in kwargs.items() if not (k in ("mask", "training") and v is None)}


def _replay_first_format(layer, inputs, kwargs):
    """A call as trainlib's first format recorded it: attention layers got their tensors
    packed in one list (see `attention.unpack_first_format_call`)."""
    unpack = getattr(layer, "_unpack_first_format_call", None)
    if unpack is not None:
        unpacked = unpack(inputs)
        if unpacked is not None:
            args, call_kwargs = unpacked
            return layer(*args, **call_kwargs, **kwargs)
    return layer(inputs, **kwargs)


def _replay_operation(layer, args):
    """Calls an operator layer on its recorded operands: Keras 3 writes them as positional
    arguments (`Add()(a, b)`, `Multiply()(x, 2)`, `GetItem()(x, key)`), trainlib as the one
    input the operation layer takes (`[a, b]`, or `x` with the constant in its config)."""
    if isinstance(layer, operators.GetItem):
        if len(args) > 1:
            layer.key = operators._decode_key(args[1])
        return layer(args[0])
    if len(args) == 1:
        return layer(args[0])
    a, b = args[0], args[1]
    if isinstance(a, KerasTensor) and isinstance(b, KerasTensor):
        return layer([a, b])
    layer.reverse = not isinstance(a, KerasTensor)
    layer.constant = operators._constant(a if layer.reverse else b)
    return layer(b if layer.reverse else a)


register_functional_api(Functional, functional_from_config)


def get_source_inputs(tensor):
    """The Input KerasTensors `tensor` is computed from, in the order a walk back from it
    meets them, each once (Keras's `keras.utils.get_source_inputs`); anything that is not a
    KerasTensor is returned as it came.

    Example:
        >>> a, b = keras.Input((2,)), keras.Input((2,))
        >>> out = keras.layers.Add()([a, keras.layers.Dense(2)(b)])
        >>> keras.utils.get_source_inputs(out) == [a, b]
        True
    """
    if not isinstance(tensor, KerasTensor):
        return tensor
    if tensor.node is None:
        return [tensor]
    sources = []
    for x in flatten((tensor.node.args, tensor.node.kwargs)):
        if isinstance(x, KerasTensor):
            for source in get_source_inputs(x):
                if all(source is not s for s in sources):
                    sources.append(source)
    return sources
