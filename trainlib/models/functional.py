"""Functional models: `tl.Model(inputs, outputs)` over the layer graph KerasTensors recorded.

Owns: collecting the nodes (layer calls) between the inputs and the outputs
in topological order, replaying them on real tensors in `call`, and the
config (layers plus which outputs feed which calls) for rebuilding.
Invariant: every layer is built when the model is made; `layers` lists the
input layers first, then each layer once in call order (the operations that
operators on KerasTensors add, `x + y`, `x[:, 0]`, run in the graph but are
not listed, as in Keras 3).
"""
from ..graph.nest import flatten, pack_as
from ..layers import operators  # noqa: F401 -- registers the operations configs may name
from ..layers.base import InputLayer, KerasTensor, Layer, deserialize, register
from ..saving.object_registration import all_custom_objects
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
        for x in flatten(node.args):
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
            for x in flatten(kt.node.args):
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

    def call(self, inputs, training=False):
        leaves = self._standardize_inputs(inputs)
        if len(leaves) != len(self._flat_inputs):
            raise ValueError(f"Model '{self.name}' expects {len(self._flat_inputs)} input(s), got "
                             f"{len(leaves)}")
        values = {id(kt): x for kt, x in zip(self._flat_inputs, leaves)}
        for node in self._nodes:
            args = pack_as(node.args, [values[id(a)] if isinstance(a, KerasTensor) else a
                                       for a in flatten(node.args)])
            out = node.layer(*args, **node.kwargs)
            for kt, value in zip(flatten(node.outputs), flatten(out)):
                values[id(kt)] = value
        return pack_as(self._outputs_struct, [values[id(kt)] for kt in self._flat_outputs])

    def _maybe_build(self, args):
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

        layer_configs = []
        for layer in self._layers:
            inbound = [{"args": [ref(a) if isinstance(a, KerasTensor) else None
                                 for a in flatten(n.args[0])],
                        "nested": isinstance(n.args[0], (list, tuple)),
                        "kwargs": n.kwargs} for n in calls_of.get(layer.name, [])]
            layer_configs.append({**serialize(layer), "name": layer.name, "inbound_nodes": inbound})
        def structure(struct, flat):
            # as Keras: a dict of named tensors is kept as a dict, in flatten (sorted-key) order
            if isinstance(struct, dict):
                return {k: ref(t) for k, t in zip(sorted(struct), flat)}
            return [ref(t) for t in flat]

        return {"name": self.name, "trainable": self.trainable, "layers": layer_configs,
                "input_layers": structure(self._inputs_struct, self._flat_inputs),
                "output_layers": structure(self._outputs_struct, self._flat_outputs),
                "single_input": not isinstance(self._inputs_struct, (list, tuple, dict)),
                "single_output": not isinstance(self._outputs_struct, (list, tuple, dict))}

    @classmethod
    def _from_config_custom(cls, config, custom_objects):
        return cls.from_config(config, custom_objects)


def functional_from_config(cls, config, custom_objects=None):
    """A functional model of class `cls` rebuilt from `Functional.get_config`'s dict."""
    custom_objects = all_custom_objects(custom_objects)
    made = {}       # layer name -> layer
    produced = {}   # (layer name, call index) -> outputs structure
    for c in config["layers"]:
        made[c["name"]] = deserialize({"module": c.get("module"), "class_name": c["class_name"],
                                       "config": c["config"]},
                                      custom_objects)

    def tensor(ref):
        name, call, index = ref
        layer = made[name]
        if isinstance(layer, InputLayer):
            return layer.output
        return flatten(produced[(name, call)])[index]

    pending = [(c["name"], i, n) for c in config["layers"] for i, n in
               enumerate(c["inbound_nodes"])]
    while pending:
        progress = False
        for item in list(pending):
            name, i, n = item
            try:
                args = [tensor(r) if r is not None else None for r in n["args"]]
            except KeyError:
                continue
            produced[(name, i)] = made[name](args if n["nested"] else args[0], **n["kwargs"])
            pending.remove(item)
            progress = True
        if not progress:
            raise ValueError("Functional config has calls whose inputs are never produced")
    def rebuild(refs, single):
        if isinstance(refs, dict):
            return {k: tensor(r) for k, r in refs.items()}
        tensors = [tensor(r) for r in refs]
        return tensors[0] if single else tensors

    return cls(rebuild(config["input_layers"], config.get("single_input")),
               rebuild(config["output_layers"], config.get("single_output")),
               name=config.get("name"), trainable=config.get("trainable", True))


register_functional_api(Functional, functional_from_config)
