"""Custom training loop: your own @tl.function train step with GradientTape, an optimizer and metrics.

Shows what Model.fit does for you, written out: batches from tl.data, a
train step traced once into a graph (forward, loss, gradients, optimizer
update and metric updates all in one graph), a test step, and metrics reset
each epoch. At the end the same train step is timed eagerly and as a graph.

    python examples/custom_training_loop.py --epochs 10
"""
import sys
import time

import trainlib as tl
from trainlib.examples import _cli
from trainlib.examples.digits_mlp import load_data


def main(argv=None):
    p = _cli.parser(__doc__, epochs=15, batch_size=32, learning_rate=1e-3, min_accuracy=0.95)
    p.add_argument("--timing-steps", type=int, default=100,
                   help="steps timed per mode in the eager vs graph comparison (default 100)")
    args = _cli.parse(p, argv, not_training=("timing_steps",))
    with _cli.session(args):
        x_train, x_test, y_train, y_test = load_data(args.seed)
        train_ds = (tl.data.Dataset.from_tensor_slices((x_train, y_train))
                    .shuffle(len(x_train), seed=args.seed).batch(args.batch_size))
        test_ds = tl.data.Dataset.from_tensor_slices((x_test, y_test)).batch(256)

        model = tl.Sequential([tl.layers.Input(shape=(64,)),
                               tl.layers.Dense(128, activation="relu"),
                               tl.layers.Dense(10)])
        loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True)
        optimizer = tl.optim.Adam(args.learning_rate)
        # Create the optimizer's slot variables now: variables belong outside tl.function.
        optimizer.build(model.trainable_variables)
        train_loss = tl.metrics.Mean(name="loss")
        train_accuracy = tl.metrics.SparseCategoricalAccuracy(name="accuracy")
        test_accuracy = tl.metrics.SparseCategoricalAccuracy(name="test_accuracy")

        # The signature's None batch dimension lets the smaller last batch reuse the same graph
        # instead of tracing a second one.
        signature = [tl.TensorSpec([None, 64], tl.float32), tl.TensorSpec([None], tl.int32)]

        @tl.function(input_signature=signature, jit_compile=args.jit)
        def train_step(x, y):
            with tl.GradientTape() as tape:
                logits = model(x, training=True)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            train_loss.update_state(loss)
            train_accuracy.update_state(y, logits)
            return loss

        @tl.function(input_signature=signature)
        def test_step(x, y):
            test_accuracy.update_state(y, model(x, training=False))

        from tqdm.auto import tqdm
        history = {"loss": [], "accuracy": [], "test_accuracy": []}
        steps = 0
        start = time.perf_counter()
        for epoch in range(args.epochs):
            for metric in (train_loss, train_accuracy, test_accuracy):
                metric.reset_state()
            bar = tqdm(train_ds, desc=f"epoch {epoch + 1}/{args.epochs}", unit="step",
                       disable=args.quiet, leave=False)
            for x, y in bar:
                train_step(x, y)
                steps += 1
            for x, y in test_ds:
                test_step(x, y)
            for metric in (train_loss, train_accuracy, test_accuracy):
                history[metric.name].append(float(metric.result()))
            if not args.quiet:
                print(f"epoch {epoch + 1}: " + ", ".join(f"{k}={v[-1]:.4f}" for k, v in history.items()))
        seconds = time.perf_counter() - start
        accuracy = history["test_accuracy"][-1]
        print(f"traces of train_step: {train_step.experimental_get_tracing_count()}")

        # The same step, timed eagerly (plain Python, op by op) and as the traced graph.
        x, y = tl.constant(x_train[:args.batch_size]), tl.constant(y_train[:args.batch_size])
        timings = {}
        for mode, eager in (("eager", True), ("graph", False)):
            tl.config.run_functions_eagerly(eager)
            train_step(x, y)  # warm up (traces in graph mode)
            t0 = time.perf_counter()
            for _ in tqdm(range(args.timing_steps), desc=f"timing {mode}", disable=args.quiet,
                          leave=False):
                train_step(x, y)
            timings[mode] = (time.perf_counter() - t0) / args.timing_steps
        tl.config.run_functions_eagerly(args.eager)
        print(f"train step: eager {timings['eager'] * 1e3:.2f} ms, graph {timings['graph'] * 1e3:.2f} ms "
              f"({timings['eager'] / timings['graph']:.1f}x faster as a graph)")

        if args.plot:
            _cli.plot_history(history, args.plot, "custom training loop")
        if args.save:
            _cli.save(model, args.save, signature[:1])
    return _cli.report("custom_training_loop", seconds, steps, accuracy, args.min_accuracy,
                       eager_ms=timings["eager"] * 1e3, graph_ms=timings["graph"] * 1e3)


if __name__ == "__main__":
    sys.exit(main())
