"""Keras 3 vs trainlib: the Model API (issue 16): a subclass of Model built functionally with
its own train_step, a two-input/two-output model fit on lists and on dicts, operators on
symbolic tensors, clone_model and model_from_json round trips, metrics_names and the
serialized forms of layers and models."""
import json
import re

import pytest

keras = pytest.importorskip("keras")

import numpy as np  # noqa: E402

import trainlib as tl  # noqa: E402

from ._common import close, close_weights, fit_both, pair  # noqa: E402

CASES = []  # Keras-level module: no op types of its own

RNG = np.random.default_rng(7)
XA = RNG.normal(size=(24, 3)).astype(np.float32)
XB = RNG.normal(size=(24, 2)).astype(np.float32)
YS = RNG.normal(size=(24, 1)).astype(np.float32)
YC = RNG.integers(0, 3, size=(24,))


def _custom_model_class(k):
    """The pattern of Keras's "customizing fit()" guide: own train_step, own metric."""

    class CustomModel(k.Model):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.loss_tracker = k.metrics.Mean(name="loss")
            self.mae_metric = k.metrics.MeanAbsoluteError(name="mae")

        def train_step(self, data):
            x, y = data
            with _tape(k) as tape:
                y_pred = self(x, training=True)
                loss = _mean_square(k, y - y_pred)
            grads = tape.gradient(loss, self.trainable_variables)
            self.optimizer.apply(grads, self.trainable_variables)
            self.loss_tracker.update_state(loss)
            self.mae_metric.update_state(y, y_pred)
            return {"loss": self.loss_tracker.result(), "mae": self.mae_metric.result()}

        @property
        def metrics(self):
            return [self.loss_tracker, self.mae_metric]

    return CustomModel


def _mean_square(k, value):
    if k is keras:
        return keras.ops.mean(keras.ops.square(value))
    return tl.reduce_mean(tl.square(value))


def _tape(k):
    if k is keras:
        import tensorflow as tf  # noqa: PLC0415
        return tf.GradientTape()
    return tl.GradientTape()


def test_subclassed_functional_model_with_custom_train_step():
    def build(k):
        inputs = k.Input(shape=(3,))
        outputs = k.layers.Dense(1)(k.layers.Dense(4, activation="relu")(inputs))
        return _custom_model_class(k)(inputs, outputs)

    km, tm = pair(build)
    assert type(tm).__name__ == "CustomModel" and len(tm.weights) == len(km.weights) == 4
    km.compile(optimizer=keras.optimizers.SGD(0.05))
    tm.compile(optimizer=tl.keras.optimizers.SGD(0.05))
    fit_both(km, tm, XA, YS, epochs=2, batch_size=8)
    assert km.metrics_names == tm.metrics_names == ["loss", "mae"]


def _two_in_two_out(k):
    a = k.Input(shape=(3,), name="a")
    b = k.Input(shape=(2,), name="b")
    h = k.layers.Dense(4, activation="relu", name="h")(
        k.layers.Dense(4, name="ha")(a) + k.layers.Dense(4, name="hb")(b) * 0.5)
    score = k.layers.Dense(1, name="score")(h)
    cls = k.layers.Dense(3, activation="softmax", name="cls")(h)
    return k.Model([a, b], [score, cls])


def _two_out_compile(k):
    return dict(optimizer=k.optimizers.SGD(0.1),
                loss={"score": "mse", "cls": "sparse_categorical_crossentropy"},
                loss_weights={"score": 0.5, "cls": 1.0},
                metrics={"cls": ["accuracy"], "score": ["mae"]})


@pytest.mark.parametrize("form", ["lists", "dicts"])
def test_two_inputs_two_outputs_fit_evaluate_predict(form):
    km, tm = pair(_two_in_two_out, _two_out_compile)
    if form == "lists":
        x, y = [XA, XB], [YS, YC]
    else:
        x, y = {"a": XA, "b": XB}, {"score": YS, "cls": YC}
    fit_both(km, tm, x, y, epochs=2, batch_size=8)
    close(km.evaluate(x, y, verbose=0), tm.evaluate(x, y, verbose=0), "evaluate")
    for kp, tp in zip(km.predict(x, verbose=0), tm.predict(x, verbose=0)):
        close(kp, tp, "predict")
    assert km.metrics_names == tm.metrics_names


@pytest.mark.parametrize("form", ["list", "dict"])
def test_loss_for_one_output_only(form):
    # the forms Keras 3.15 accepts (trainlib also takes a dict naming only some outputs)
    loss = [None, "sparse_categorical_crossentropy"] if form == "list" else \
        {"score": None, "cls": "sparse_categorical_crossentropy"}
    km, tm = pair(_two_in_two_out, lambda k: dict(optimizer=k.optimizers.SGD(0.1), loss=loss))
    y = [YS, YC] if form == "list" else {"score": YS, "cls": YC}
    fit_both(km, tm, [XA, XB], y, epochs=1, batch_size=8)


def test_clone_model_round_trip():
    km, tm = pair(_two_in_two_out)
    kc, tc = keras.models.clone_model(km), tl.keras.models.clone_model(tm)
    assert [type(l).__name__ for l in kc.layers] == [type(l).__name__ for l in tc.layers]
    assert [l.name for l in kc.layers] == [l.name for l in tc.layers]
    assert [w.shape for w in kc.get_weights()] == [w.shape for w in tc.get_weights()]
    kc.set_weights(km.get_weights())
    tc.set_weights(km.get_weights())
    for kp, tp in zip(kc.predict([XA, XB], verbose=0), tc.predict([XA, XB], verbose=0)):
        close(kp, tp, "clone predict")
    seq_k = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, name="d")], name="s")
    seq_t = tl.keras.Sequential([tl.keras.Input((3,)), tl.keras.layers.Dense(2, name="d")],
                                name="s")
    ck, ct = keras.models.clone_model(seq_k), tl.keras.models.clone_model(seq_t)
    assert (type(ck).__name__, ck.name, [l.name for l in ck.layers]) == \
        (type(ct).__name__, ct.name, [l.name for l in ct.layers])


def test_model_from_json_round_trip():
    km, tm = pair(_two_in_two_out)
    kj, tj = json.loads(km.to_json()), json.loads(tm.to_json())
    for key in ("module", "class_name", "registered_name"):
        assert kj[key] == tj[key], key
    kr = keras.models.model_from_json(km.to_json())
    tr = tl.keras.models.model_from_json(tm.to_json())
    assert [l.name for l in kr.layers] == [l.name for l in tr.layers]
    kr.set_weights(km.get_weights())
    tr.set_weights(km.get_weights())
    for kp, tp in zip(kr.predict([XA, XB], verbose=0), tr.predict([XA, XB], verbose=0)):
        close(kp, tp, "model_from_json predict")
    seq = lambda k: k.Sequential([k.Input((3,)), k.layers.Dense(2), k.layers.Dropout(0.2)])  # noqa: E731
    sk, st = pair(seq)
    sj, tj = json.loads(sk.to_json()), json.loads(st.to_json())
    assert (sj["module"], sj["class_name"], sj["registered_name"]) == \
        (tj["module"], tj["class_name"], tj["registered_name"])
    assert sj["build_config"] == {"input_shape": [None, 3]} == tj["build_config"]
    close_weights([w.shape for w in keras.models.model_from_json(sk.to_json()).get_weights()],
                  [w.shape for w in tl.keras.models.model_from_json(st.to_json()).get_weights()],
                  "weight shapes")


def test_layer_serialize_fields():
    for name, make in (("Dense", lambda k: k.layers.Dense(2)),
                       ("Dropout", lambda k: k.layers.Dropout(0.5))):
        ks, ts = keras.layers.serialize(make(keras)), tl.keras.layers.serialize(make(tl.keras))
        assert {k: ks[k] for k in ("module", "class_name", "registered_name")} == \
            {k: ts[k] for k in ("module", "class_name", "registered_name")}, name
    kf = keras.saving.serialize_keras_object(keras.activations.relu)
    tf_ = tl.keras.saving.serialize_keras_object(tl.keras.activations.relu)
    assert kf == tf_


def test_metrics_names_before_and_after_fit():
    km, tm = pair(_two_in_two_out, _two_out_compile)
    assert km.metrics_names == tm.metrics_names
    km.fit([XA, XB], [YS, YC], verbose=0, epochs=1)
    tm.fit([XA, XB], [YS, YC], verbose=0, epochs=1)
    assert km.metrics_names == tm.metrics_names


def test_model_checkpoint_messages(tmp_path, capsys):
    def build(k):
        return k.Sequential([k.Input((2,)), k.layers.Dense(1, kernel_initializer="zeros")])

    x, y = np.ones((4, 2), np.float32), np.ones((4, 1), np.float32)
    outputs = []
    for k, suffix in ((keras, "k"), (tl.keras, "t")):
        model = build(k)
        model.compile(k.optimizers.SGD(0.01), "mse")
        path = tmp_path / "best.keras"
        ckpt = k.callbacks.ModelCheckpoint(str(path), monitor="val_loss", save_best_only=True,
                                           verbose=1)
        capsys.readouterr()
        model.fit(x, y, validation_data=(x, -y), epochs=3, verbose=0, callbacks=[ckpt])
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]


def test_out_of_data_warning():
    messages = []
    for k in (keras, tl.keras):
        model = k.Sequential([k.Input((2,)), k.layers.Dense(1)])
        model.compile("sgd", "mse")
        x, y = np.ones((8, 2), np.float32), np.ones((8, 1), np.float32)
        with pytest.warns(UserWarning) as caught:
            model.fit(x, y, batch_size=4, steps_per_epoch=3, epochs=2, verbose=0)
        messages.append(sorted({str(w.message) for w in caught if "ran out" in str(w.message)}))
    assert messages[0] == messages[1] and messages[0]


def test_summary_lists_operations_as_keras():
    texts = []
    for k in (keras, tl.keras):
        a, b = k.Input((3,), name="a"), k.Input((3,), name="b")
        model = k.Model([a, b], [k.layers.Dense(2, name="d")(a + b)[:, 0]], name="ops")
        lines = []
        model.summary(print_fn=lambda line, *args, **kwargs: lines.append(line))
        text = "\n".join(line.rstrip("\n") for line in lines)
        # the operations' default names count per process, differently in each framework
        texts.append(re.sub(" +", " ", re.sub(r"\b(add|get_item)(_\d+)?\b", r"\1", text)))
    assert texts[0] == texts[1]


def test_customizing_fit_guide_with_compiled_metrics():
    def build(k):
        class GuideModel(k.Model):
            def train_step(self, data):
                x, y = data
                with _tape(k) as tape:
                    y_pred = self(x, training=True)
                    loss = self.compute_loss(y=y, y_pred=y_pred)
                grads = tape.gradient(loss, self.trainable_variables)
                self.optimizer.apply(grads, self.trainable_variables)
                for metric in self.metrics:
                    if metric.name == "loss":
                        metric.update_state(loss)
                    else:
                        metric.update_state(y, y_pred)
                return {m.name: m.result() for m in self.metrics}

        inputs = k.Input((3,))
        return GuideModel(inputs, k.layers.Dense(1)(inputs))

    km, tm = pair(build, lambda k: dict(optimizer=k.optimizers.SGD(0.05), loss="mse",
                                          metrics=["mae"]))
    fit_both(km, tm, XA, YS, epochs=2, batch_size=8)


def test_dict_inputs_dict_outputs_with_per_output_sample_weights():
    def build(k):
        a, b = k.Input(shape=(3,), name="a"), k.Input(shape=(2,), name="b")
        h = k.layers.Dense(4, activation="relu")(k.layers.Dense(4)(a) + k.layers.Dense(4)(b))
        return k.Model({"a": a, "b": b}, {"score": k.layers.Dense(1)(h),
                                          "cls": k.layers.Dense(3, activation="softmax")(h)})

    km, tm = pair(build, _two_out_compile)
    weights = {"score": np.linspace(0.5, 1.5, 24).astype(np.float32),
               "cls": np.linspace(1.5, 0.5, 24).astype(np.float32)}
    fit_both(km, tm, {"a": XA, "b": XB}, {"score": YS, "cls": YC}, epochs=2, batch_size=8,
             sample_weight=weights)
    kp, tp = km.predict({"a": XA, "b": XB}, verbose=0), tm.predict({"a": XA, "b": XB}, verbose=0)
    assert sorted(kp) == sorted(tp)
    for key in kp:
        close(kp[key], tp[key], f"predict[{key}]")
