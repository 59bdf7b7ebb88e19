"""The benchmark models shared by bench/vs_frameworks.py and bench/memory.py: their shapes,
initial weights (numpy, so every framework starts from the same values), the trainlib
train steps, and the same steps written by hand in numpy (Keras 3's Adam, softmax
cross-entropy), the floor a numpy-executed graph can reach.

Cases: MLP 64-128-10 batch 32; MLP 784-1024-1024-10 batch 256; a CNN (Conv2D 32 3x3, MaxPool 2,
Conv2D 64 3x3, MaxPool 2, Dense 10 on 28x28x1, batch 64); SimpleRNN 64 units over 50 steps of 32
features, batch 32, then Dense(1) and mean squared error; and four models of Keras layers
(LAYER_MODELS: a Transformer encoder block, an LSTM, an Embedding, a residual CNN block with
BatchNormalization), each built by one function from trainlib.keras or Keras 3 alike, their
initial weights those trainlib's default initializers make from a seed; and the SimpleRNN step
by hand in JAX (`jax_simple_rnn_step`, for bench/rnn.py and bench/keras_rnn_embedding.py).
"""
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

import trainlib as tl

LR, B1, B2, EPS = 1e-3, 0.9, 0.999, 1e-7
MLP_SMALL = dict(sizes=(64, 128, 10), batch=32)
MLP_LARGE = dict(sizes=(784, 1024, 1024, 10), batch=256)
CNN = dict(image=(28, 28, 1), filters=(32, 64), classes=10, batch=64)
RNN = dict(steps=50, features=32, units=64, batch=32)


def _glorot(rng, shape, fan_in, fan_out):
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape).astype(np.float32)


def mlp_data(sizes, batch, seed=0, batches=1):
    """(params [w0, b0, w1, b1, ...], x, y) with `batches` batches of data."""
    rng = np.random.default_rng(seed)
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        params += [_glorot(rng, (a, b), a, b), np.zeros(b, np.float32)]
    x = rng.standard_normal((batch * batches, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], size=batch * batches).astype(np.int32)
    return params, x, y


def cnn_data(seed=0):
    rng = np.random.default_rng(seed)
    h, w, c = CNN["image"]
    f1, f2 = CNN["filters"]
    flat = ((h - 2) // 2 - 2) // 2
    flat = flat * flat * f2
    params = [_glorot(rng, (3, 3, c, f1), 9 * c, 9 * f1), np.zeros(f1, np.float32),
              _glorot(rng, (3, 3, f1, f2), 9 * f1, 9 * f2), np.zeros(f2, np.float32),
              _glorot(rng, (flat, CNN["classes"]), flat, CNN["classes"]),
              np.zeros(CNN["classes"], np.float32)]
    x = rng.standard_normal((CNN["batch"], h, w, c)).astype(np.float32)
    y = rng.integers(0, CNN["classes"], size=CNN["batch"]).astype(np.int32)
    return params, x, y


def rnn_data(seed=0):
    rng = np.random.default_rng(seed)
    f, u = RNN["features"], RNN["units"]
    q, _ = np.linalg.qr(rng.standard_normal((u, u)))
    params = [_glorot(rng, (f, u), f, u), q.astype(np.float32), np.zeros(u, np.float32),
              _glorot(rng, (u, 1), u, 1), np.zeros(1, np.float32)]
    x = rng.standard_normal((RNN["batch"], RNN["steps"], f)).astype(np.float32)
    y = rng.standard_normal((RNN["batch"], 1)).astype(np.float32)
    return params, x, y


# ------------------------------------------------------------------ trainlib

def tl_mlp(sizes):
    layers = [tl.layers.Input((sizes[0],))]
    layers += [tl.layers.Dense(n, activation="relu") for n in sizes[1:-1]]
    return tl.Sequential(layers + [tl.layers.Dense(sizes[-1])])


def tl_cnn():
    L = tl.layers
    f1, f2 = CNN["filters"]
    return tl.Sequential([L.Input(CNN["image"]), L.Conv2D(f1, 3, activation="relu"),
                          L.MaxPooling2D(2), L.Conv2D(f2, 3, activation="relu"),
                          L.MaxPooling2D(2), L.Flatten(), L.Dense(CNN["classes"])])


def tl_rnn():
    return tl.Sequential([tl.layers.Input((RNN["steps"], RNN["features"])),
                          tl.layers.SimpleRNN(RNN["units"]), tl.layers.Dense(1)])


def tl_step(model, params, loss, jit_compile=False, fused=None):
    """A `tl.function` train step (forward, loss, gradients, Adam) of `model` from `params`
    (`jit_compile`: fused regions compiled, see docs/jit.md; `fused`: Adam's flat update,
    see docs/optimizers-and-memory.md)."""
    model.set_weights(params)
    opt = tl.optim.Adam(LR, fused=fused)
    opt.build(model.trainable_variables)
    loss_fn = (tl.losses.SparseCategoricalCrossentropy(from_logits=True) if loss == "sparse_ce"
               else tl.losses.MeanSquaredError())

    @tl.function(jit_compile=jit_compile)
    def step(x, y):
        with tl.GradientTape() as tape:
            value = loss_fn(y, model(x, training=True))
        opt.apply_gradients(zip(tape.gradient(value, model.trainable_variables),
                                model.trainable_variables))
        return value
    return step


# ------------------------------------------------------------------ numpy by hand

class NumpyAdam:
    """Keras 3's Adam over a list of arrays, updated in place."""

    def __init__(self, params):
        self.p = [p.copy() for p in params]
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def update(self, grads):
        self.t += 1
        alpha = LR * np.sqrt(1 - B2 ** self.t) / (1 - B1 ** self.t)
        for p, g, m, v in zip(self.p, grads, self.m, self.v):
            m += (g - m) * (1 - B1)
            v += (g * g - v) * (1 - B2)
            p -= m * alpha / (np.sqrt(v) + EPS)


def _softmax_ce(logits, y):
    """(mean sparse softmax cross-entropy, its gradient with respect to the logits)."""
    mx = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - mx)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(len(y))
    loss = np.mean(np.log(s[:, 0]) + mx[:, 0] - logits[rows, y])
    d = e / s
    d[rows, y] -= 1
    d /= len(y)
    return loss, d


class NumpyMLP(NumpyAdam):
    """Dense layers with relu between, softmax cross-entropy, Adam: the step by hand."""

    def step(self, x, y):
        ws, bs = self.p[0::2], self.p[1::2]
        acts, pre = [x], []
        for i, (w, b) in enumerate(zip(ws, bs)):
            z = acts[-1] @ w + b
            pre.append(z)
            acts.append(np.maximum(z, 0) if i < len(ws) - 1 else z)
        loss, d = _softmax_ce(acts[-1], y)
        grads = [None] * len(self.p)
        for i in reversed(range(len(ws))):
            grads[2 * i], grads[2 * i + 1] = acts[i].T @ d, d.sum(axis=0)
            if i:
                d = d @ ws[i].T
                d *= pre[i - 1] > 0
        self.update(grads)
        return loss


def _im2col(x, k):
    """(B*oh*ow, k*k*C) VALID 3x3 patches, rows (kh, kw, C) as HWIO filters."""
    b, h, w, c = x.shape
    v = sliding_window_view(x, (k, k), axis=(1, 2))            # (B, oh, ow, C, k, k)
    return v.transpose(0, 1, 2, 4, 5, 3).reshape(-1, k * k * c)


def _col2im(cols, x_shape, k):
    b, h, w, c = x_shape
    oh, ow = h - k + 1, w - k + 1
    cols = cols.reshape(b, oh, ow, k, k, c)
    dx = np.zeros(x_shape, cols.dtype)
    for i in range(k):
        for j in range(k):
            dx[:, i:i + oh, j:j + ow] += cols[:, :, :, i, j]
    return dx


def _pool2(a):
    """2x2 max pooling (VALID, odd edges dropped) and the argmax mask for the gradient."""
    b, h, w, c = a.shape
    r = a[:, :h // 2 * 2, :w // 2 * 2].reshape(b, h // 2, 2, w // 2, 2, c)
    out = r.max(axis=(2, 4))
    return out, r == out[:, :, None, :, None]


def _unpool2(d, mask, a_shape):
    b, h, w, c = a_shape
    dx = np.zeros(a_shape, d.dtype)
    dx[:, :h // 2 * 2, :w // 2 * 2] = (mask * d[:, :, None, :, None]).reshape(
        b, h // 2 * 2, w // 2 * 2, c)
    return dx


class NumpyCNN(NumpyAdam):
    """The CNN step by hand: im2col convolutions, 2x2 max pooling (ties share the gradient, a
    shortcut the frameworks do not take), softmax cross-entropy, Adam."""

    def step(self, x, y):
        w1, b1, w2, b2, w3, b3 = self.p
        c1 = _im2col(x, 3)
        z1 = (c1 @ w1.reshape(-1, w1.shape[-1])).reshape(x.shape[0], 26, 26, -1) + b1
        a1 = np.maximum(z1, 0)
        p1, m1 = _pool2(a1)
        c2 = _im2col(p1, 3)
        z2 = (c2 @ w2.reshape(-1, w2.shape[-1])).reshape(x.shape[0], 11, 11, -1) + b2
        a2 = np.maximum(z2, 0)
        p2, m2 = _pool2(a2)
        flat = p2.reshape(len(x), -1)
        loss, d = _softmax_ce(flat @ w3 + b3, y)
        g3, gb3 = flat.T @ d, d.sum(axis=0)
        d = _unpool2((d @ w3.T).reshape(p2.shape), m2, a2.shape) * (z2 > 0)
        d2 = d.reshape(-1, d.shape[-1])
        g2, gb2 = (c2.T @ d2).reshape(w2.shape), d2.sum(axis=0)
        d = _col2im(d2 @ w2.reshape(-1, w2.shape[-1]).T, p1.shape, 3)
        d = _unpool2(d, m1, a1.shape) * (z1 > 0)
        d1 = d.reshape(-1, d.shape[-1])
        g1, gb1 = (c1.T @ d1).reshape(w1.shape), d1.sum(axis=0)
        self.update([g1, gb1, g2, gb2, g3, gb3])
        return loss


# ------------------------------------------------------------------ models of Keras layers
# Each is written once against a Keras-like module `k`: trainlib.keras, or Keras 3 itself
# (which mirrors it), so both build the same model with the same weights in the same order.

TRANSFORMER = dict(seq=64, dim=128, heads=4, key_dim=32, ffn=512, classes=10, batch=32)
LSTM = dict(steps=50, features=32, units=128, classes=10, batch=32)
EMBEDDING = dict(vocab=20000, dim=64, tokens=100, classes=10, batch=64)
RESCNN = dict(image=(32, 32, 3), filters=32, classes=10, batch=32)


def transformer_model(k):
    """A Transformer encoder block: self-attention, Add + LayerNormalization, FFN, Add +
    LayerNormalization, global average pooling, Dense head."""
    L, c = k.layers, TRANSFORMER
    x = k.Input((c["seq"], c["dim"]))
    a = L.MultiHeadAttention(num_heads=c["heads"], key_dim=c["key_dim"])(x, x)
    h = L.LayerNormalization()(L.Add()([x, a]))
    f = L.Dense(c["dim"])(L.Dense(c["ffn"], activation="relu")(h))
    h = L.LayerNormalization()(L.Add()([h, f]))
    return k.Model(x, L.Dense(c["classes"])(L.GlobalAveragePooling1D()(h)))


def lstm_model(k):
    L, c = k.layers, LSTM
    x = k.Input((c["steps"], c["features"]))
    return k.Model(x, L.Dense(c["classes"])(L.LSTM(c["units"])(x)))


def embedding_model(k):
    L, c = k.layers, EMBEDDING
    x = k.Input((c["tokens"],), dtype="int32")
    h = L.GlobalAveragePooling1D()(L.Embedding(c["vocab"], c["dim"])(x))
    return k.Model(x, L.Dense(c["classes"])(h))


def rescnn_model(k):
    """Conv2D 3x3 + BatchNormalization + relu, Conv2D 3x3 + BatchNormalization, Add with a
    1x1 Conv2D projection of the input, relu, global average pooling, Dense head."""
    L, c = k.layers, RESCNN
    x = k.Input(c["image"])
    conv = lambda size: L.Conv2D(c["filters"], size, padding="same", use_bias=False)  # noqa: E731
    h = L.ReLU()(L.BatchNormalization()(conv(3)(x)))
    h = L.BatchNormalization()(conv(3)(h))
    h = L.ReLU()(L.Add()([h, L.Conv2D(c["filters"], 1)(x)]))
    return k.Model(x, L.Dense(c["classes"])(L.GlobalAveragePooling2D()(h)))


LAYER_MODELS = {"transformer": (transformer_model, TRANSFORMER), "lstm": (lstm_model, LSTM),
                "embedding": (embedding_model, EMBEDDING), "rescnn": (rescnn_model, RESCNN)}


def _inputs(rng, config):
    """A batch of `config`'s model inputs: token ids below its vocabulary, or normal floats."""
    if "vocab" in config:
        return rng.integers(0, config["vocab"], size=(config["batch"], config["tokens"]),
                            dtype=np.int32)
    shape = config.get("image") or (config.get("seq") or config["steps"],
                                    config.get("dim") or config["features"])
    return rng.standard_normal((config["batch"], *shape)).astype(np.float32)


def layers_data(name, seed=0):
    """(weights, trainable, x, y) of the `LAYER_MODELS[name]` case: the initial weights (numpy,
    in the models' order) as the layers' default initializers make them in trainlib from
    `seed`, whether each is trainable (not a BatchNormalization moving statistic), a batch."""
    build, config = LAYER_MODELS[name]
    tl.keras.utils.set_random_seed(seed)
    model = build(tl.keras)
    trainable = {id(v) for v in model.trainable_variables}
    flags = [id(v) in trainable for v in model.weights]
    rng = np.random.default_rng(seed)
    x = _inputs(rng, config)
    y = rng.integers(0, config["classes"], size=config["batch"]).astype(np.int32)
    return model.get_weights(), flags, x, y
def jax_simple_rnn_step(weights, units):
    """The SimpleRNN case by hand in JAX (`lax.scan` over time, Adam from optax), jit-compiled,
    from a SimpleRNN + Dense model's initial `weights` (kernel, recurrent kernel, bias, dense
    kernel, dense bias); None without JAX."""
    try:
        import jax  # noqa: PLC0415
        import jax.numpy as jnp  # noqa: PLC0415
        import optax  # noqa: PLC0415
    except ImportError:
        return None
    kernel, recurrent, bias, dense, dense_bias = [jnp.asarray(w) for w in weights]
    params = {"w": kernel, "u": recurrent, "b": bias, "d": dense, "db": dense_bias}
    opt = optax.adam(1e-3)
    state = [params, opt.init(params)]

    def loss_fn(p, x, y):
        def cell(h, xt):
            h = jnp.tanh(xt @ p["w"] + h @ p["u"] + p["b"])
            return h, None
        h, _ = jax.lax.scan(cell, jnp.zeros((x.shape[0], units), x.dtype), jnp.swapaxes(x, 0, 1))
        return jnp.mean(jnp.square(h @ p["d"] + p["db"] - y))

    @jax.jit
    def update(p, s, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        updates, s = opt.update(grads, s, p)
        return optax.apply_updates(p, updates), s, loss

    def step(x, y):
        state[0], state[1], loss = update(state[0], state[1], x, y)
        return loss
    return step
