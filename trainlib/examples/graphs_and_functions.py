"""Graphs and tl.function: a runnable tour of what tracing does, ending with a training step.

Sections follow the guide "Introduction to graphs and tf.function" (ported in
shared/spec/seed_guide.py): a Function is called like a Python function;
tracing applies to everything it calls; AutoGraph turns `if` on tensors into
graph control flow (and `to_code` shows how); the graph printed; polymorphism
(one Function, several graphs); Python side effects run only while tracing;
non-strict execution; Variables belong outside; the speed-up of graphs; and
a small model trained with a traced train step. The flags (--epochs,
--batch-size, --learning-rate, --eager, --jit, --plot, --save) apply to that
last section; --eager there shows the same loop without graphs.

    python examples/graphs_and_functions.py --plot loss.png --save linear_model
    python examples/graphs_and_functions.py --graph train_step.svg   # needs Graphviz

--graph PATH draws the traced train step (tl.utils.plot_graph): .svg/.png/.pdf
need the graphviz Python package and the Graphviz programs; .dot writes the
DOT text and needs neither.
"""
import importlib.util
import shutil
import sys
import timeit

import numpy as np

import trainlib as tl
from trainlib.examples import _cli

failures = []


def section(title):
    print(f"\n=== {title} ===")


def expect(condition, what):
    """Records a failed expectation (the exit status becomes 1) instead of stopping the tour."""
    if not condition:
        failures.append(what)
        print(f"  !! expected: {what}")


def a_regular_function(x, y, b):
    return tl.matmul(x, y) + b


def simple_relu(x):
    if tl.greater(x, 0):  # a tensor condition: AutoGraph makes this a graph `If`
        return x
    else:
        return 0


def power(x, y):
    result = tl.eye(10, dtype=tl.int32)
    for _ in range(y):  # a Python int: the loop is unrolled while tracing (100 MatMuls)
        result = tl.matmul(x, result)
    return result


def autograph_section():
    tl_simple_relu = tl.function(simple_relu)
    print("simple_relu(1) =", tl_simple_relu(tl.constant(1)).numpy(),
          " simple_relu(-1) =", tl_simple_relu(tl.constant(-1)).numpy())
    print("traces:", tl_simple_relu.experimental_get_tracing_count(), "(one graph, both branches)")
    expect(tl_simple_relu.experimental_get_tracing_count() == 1, "one trace for both branches")
    print("the converted source, tl.autograph.to_code(simple_relu):")
    print(tl.autograph.to_code(simple_relu))

    section("The graph itself (as_graph_def, protobuf text form, first lines)")
    graph = tl_simple_relu.get_concrete_function(tl.constant(1)).graph
    print("operations:", [op.type for op in graph.get_operations()])
    text = str(graph.as_graph_def()).splitlines()
    print("\n".join(text[:30]) + (f"\n... ({len(text) - 30} more lines)" if len(text) > 30 else ""))


def tour(args):
    section("A Function is called like a Python function")
    a_function_that_uses_a_graph = tl.function(a_regular_function)
    x1, y1, b1 = tl.constant([[1.0, 2.0]]), tl.constant([[2.0], [3.0]]), tl.constant(4.0)
    eager_value = a_regular_function(x1, y1, b1)
    graph_value = a_function_that_uses_a_graph(x1, y1, b1)
    print("eager:", eager_value, "\ngraph:", graph_value)
    expect((eager_value.numpy() == graph_value.numpy()).all(), "eager == graph")

    section("AutoGraph: `if` on a tensor becomes graph control flow")
    try:
        autograph_section()
    except TypeError as e:  # AutoGraph left `if` on a tensor as Python: say so, carry on
        expect(False, f"AutoGraph converts simple_relu, got: {str(e).splitlines()[0]}")

    section("Polymorphism: one Function, one graph per input signature")

    @tl.function
    def my_relu(x):
        return tl.maximum(0.0, x)

    print(my_relu(tl.constant(5.5)))
    print(my_relu([1, -1]))                        # a Python list: traced by value
    print(my_relu(tl.constant([3.0, -3.0])))
    print(my_relu(tl.constant(-2.5)))              # same signature as 5.5: no new trace
    print("traces:", my_relu.experimental_get_tracing_count())
    expect(my_relu.experimental_get_tracing_count() == 3, "three traces for three signatures")
    print(my_relu.pretty_printed_concrete_signatures())

    section("Python side effects run while tracing; tl.print runs every call")

    @tl.function
    def get_mse(y_true, y_pred):
        print("  (Python print: tracing get_mse)")
        tl.print("  (tl.print: running the graph)")
        return tl.reduce_mean(tl.pow(y_true - y_pred, 2))

    y_true = tl.random.uniform([5], maxval=10, dtype=tl.int32)
    y_pred = tl.random.uniform([5], maxval=10, dtype=tl.int32)
    for _ in range(3):
        mse = get_mse(y_true, y_pred)
    print("integer MSE:", mse, "(an integer mean, as TensorFlow)")

    section("Non-strict execution: only what the outputs need runs")

    @tl.function
    def unused_return_graph(x):
        tl.gather(x, [1])  # out of range, but its result is unused: the graph never runs it
        return x

    print("graph:", unused_return_graph(tl.constant([0.0])))
    try:
        tl.gather(tl.constant([0.0]), [1])
        expect(False, "eager gather out of range raises")
    except tl.errors.InvalidArgumentError as e:
        print("eager raises:", type(e).__name__, "-", str(e).splitlines()[0])

    section("Variables: create them outside, change them inside")
    counter = tl.Variable(0)

    @tl.function
    def bump(n):
        counter.assign_add(n)
        return counter.read_value()

    bump(tl.constant(2))
    print("counter after bump(2), bump(3):", int(bump(tl.constant(3))))

    section("The speed-up: power(x, 100) eagerly and as a graph")
    x = tl.random.uniform(shape=[10, 10], minval=-1, maxval=2, dtype=tl.int32)
    power_as_graph = tl.function(power, jit_compile=args.jit)
    expect((power(x, 100).numpy() == power_as_graph(x, 100).numpy()).all(), "power eager == graph")
    eager_s = min(timeit.repeat(lambda: power(x, 100), number=20, repeat=3)) / 20
    graph_s = min(timeit.repeat(lambda: power_as_graph(x, 100), number=20, repeat=3)) / 20
    print(f"eager {eager_s * 1e3:.2f} ms, graph {graph_s * 1e3:.2f} ms per call: "
          f"{eager_s / graph_s:.1f}x faster as a graph")
    return eager_s / graph_s


class LinearModel(tl.Module):
    """y = x @ w + b, with a serving function that tl.saved_model.save can store."""

    def __init__(self, num_features):
        super().__init__()
        self.w = tl.Variable(tl.zeros([num_features, 1]), name="w")
        self.b = tl.Variable(0.0, name="b")

    @tl.function(input_signature=[tl.TensorSpec([None, 3], tl.float32)])
    def predict(self, x):
        return tl.matmul(x, self.w) + self.b


def train(args):
    section("Putting it together: a train step traced into one graph")
    rng = np.random.default_rng(args.seed)
    x_all = rng.normal(size=(1024, 3)).astype(np.float32)
    y_all = (x_all @ np.array([[2.0], [-1.0], [0.5]], np.float32) + 0.3
             + 0.05 * rng.normal(size=(1024, 1)).astype(np.float32))
    model = LinearModel(3)
    optimizer = tl.optim.SGD(args.learning_rate, momentum=0.9)
    optimizer.build([model.w, model.b])

    # One signature with a None batch dimension: the last, smaller batch reuses the same graph.
    @tl.function(input_signature=[tl.TensorSpec([None, 3], tl.float32),
                                  tl.TensorSpec([None, 1], tl.float32)], jit_compile=args.jit)
    def train_step(x, y):
        with tl.GradientTape() as tape:
            loss = tl.reduce_mean(tl.square(model.predict(x) - y))
        optimizer.apply_gradients(zip(tape.gradient(loss, [model.w, model.b]), [model.w, model.b]))
        return loss

    from tqdm.auto import tqdm
    losses, steps = [], 0
    with _cli.Timer() as t:
        for _ in tqdm(range(args.epochs), desc="epochs", unit="epoch", disable=args.quiet):
            order = rng.permutation(len(x_all))
            epoch_loss = []
            for start in range(0, len(x_all), args.batch_size):
                rows = order[start:start + args.batch_size]
                epoch_loss.append(float(train_step(tl.constant(x_all[rows]), tl.constant(y_all[rows]))))
                steps += 1
            losses.append(float(np.mean(epoch_loss)))
    w = ", ".join(f"{v:.2f}" for v in model.w.numpy().ravel())
    print(f"learned w=[{w}] b={float(model.b.numpy()):.2f} "
          f"(true [2.0, -1.0, 0.5], 0.3)")
    if not args.eager:
        concrete = train_step.get_concrete_function()
        print(f"the whole step (forward, gradients, momentum update) is one graph of "
              f"{len(concrete.graph.get_operations())} operations; traces: "
              f"{train_step.experimental_get_tracing_count()}")
    if args.plot:
        _cli.plot_history({"loss": losses}, args.plot, "linear model, traced train step")
    if args.graph:
        path = tl.utils.plot_graph(train_step.get_concrete_function(), args.graph)
        print(f"train-step graph written to {path}")
    if args.save:
        tl.saved_model.save(model, args.save)
        reloaded = tl.saved_model.load(args.save)
        same = np.allclose(reloaded.predict(tl.constant(x_all[:8])), model.predict(x_all[:8]))
        print(f"saved model written to {args.save}; the reloaded predict agrees: {same}")
        expect(same, "the reloaded model predicts as the trained one")
    final = float(tl.reduce_mean(tl.square(model.predict(x_all) - y_all)))
    initial = float(np.mean(y_all ** 2))  # the loss of the zero-initialized model
    if args.default_run:    # a shortened or changed run only reports its loss
        expect(final < 0.1 * initial, f"training cuts the loss tenfold (from {initial:.2f}, got {final:.2f})")
    return final, t.seconds, steps


def main(argv=None):
    p = _cli.parser(__doc__, epochs=20, batch_size=64, learning_rate=0.05)
    p.add_argument("--graph", metavar="PATH",
                   help="draw the traced train step to PATH (.svg/.png/.pdf need Graphviz; .dot does not)")
    args = _cli.parse(p, argv, not_training=("graph",))
    if args.graph and not args.graph.lower().endswith((".dot", ".gv")) and (
            importlib.util.find_spec("graphviz") is None or shutil.which("dot") is None):
        p.error("--graph needs the graphviz Python package and the Graphviz programs to write "
                f"{args.graph}: pip install graphviz, and apt-get install graphviz (or your OS "
                "package manager's graphviz); or give a .dot path, which needs neither")
    failures.clear()
    with _cli.session(args):
        tl.config.run_functions_eagerly(False)  # the tour is about graphs; --eager is for train()
        speedup = tour(args)
        tl.config.run_functions_eagerly(args.eager)
        loss, seconds, steps = train(args)
    _cli.summary("graphs_and_functions", seconds, steps, power_speedup=speedup, final_loss=loss)
    if failures:
        print("graphs_and_functions: FAILED:", "; ".join(failures), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
