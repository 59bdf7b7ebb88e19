"""The program each MPI rank runs in tests/distribute (and, for `reference`, one plain process).

`python worker.py MODE OUT_DIR`:
  train      fit K steps and a custom loop K steps under MPIStrategy; write each rank's results
  reference  the same two trainings in one process on the same global batches (no MPI)
  fail       rank 1 raises while rank 0 waits in an all-reduce (must abort, not hang)
Ranks start from DIFFERENT random weights, so equality with the reference also
shows that rank 0's weights were broadcast.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import trainlib as tl  # noqa: E402

STEPS, GLOBAL_BATCH = 3, 15  # 15 rows over 2 ranks: uneven shards (7 and 8)


def data():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(STEPS * GLOBAL_BATCH, 6)).astype(np.float32)
    y = rng.randint(0, 3, size=STEPS * GLOBAL_BATCH).astype(np.int32)
    return x, y


def build_model():
    model = tl.Sequential([tl.layers.Input(shape=(6,)), tl.layers.Dense(8, activation="tanh"),
                           tl.layers.Dense(3)])
    model.compile(optimizer=tl.optim.Adam(0.05), loss=tl.losses.SparseCategoricalCrossentropy(
        from_logits=True), metrics=["accuracy"])
    return model


def custom_loop(strategy, model, optimizer, x, y):
    loss_fn = tl.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")

    def step_fn(xb, yb):
        with tl.GradientTape() as tape:
            loss = tl.distribute.compute_average_loss(loss_fn(yb, model(xb, training=True)),
                                                      global_batch_size=GLOBAL_BATCH)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))  # sums over ranks
        return loss

    @tl.function
    def train_step(xb, yb):
        return strategy.reduce("SUM", strategy.run(step_fn, args=(xb, yb)), axis=None)

    dataset = tl.data.Dataset.from_tensor_slices((x, y)).batch(GLOBAL_BATCH)
    return [float(train_step(xb, yb)) for xb, yb in strategy.experimental_distribute_dataset(dataset)]


def main(mode, out_dir):
    strategy = tl.distribute.MPIStrategy() if mode != "reference" else tl.distribute.get_strategy()
    rank = strategy.rank
    if mode == "fail":
        if rank == 1:
            raise ValueError("rank one fails on purpose")
        tl.distribute.all_reduce(tl.constant(1.0), "SUM", strategy.group_key)  # waits for rank 1
        return
    x, y = data()
    tl.random.set_seed(100 + rank)  # different starting weights on each rank
    with strategy.scope():
        model = build_model()
    history = model.fit(x, y, batch_size=GLOBAL_BATCH, epochs=1, shuffle=False, verbose=0)
    evaluation = model.evaluate(x, y, batch_size=GLOBAL_BATCH, verbose=0, return_dict=True)
    with strategy.scope():
        loop_model = tl.Sequential([tl.layers.Input(shape=(6,)), tl.layers.Dense(3)])
        optimizer = tl.optim.SGD(0.1)
    losses = custom_loop(strategy, loop_model, optimizer, x, y)
    np.savez(os.path.join(out_dir, f"rank{rank}.npz"),
             *[np.asarray(w) for w in model.get_weights() + loop_model.get_weights()])
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump({"history": history.history, "evaluate": evaluation, "loop_losses": losses,
                   "replicas": strategy.num_replicas_in_sync}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
