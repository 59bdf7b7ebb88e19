"""Small models for the `.keras` tests: one of each kind (Sequential, functional, subclassed),
together using every layer class in `tl.layers`, plus data for them."""
import numpy as np

import trainlib as tl
from trainlib import layers as L


@tl.saving.register_keras_serializable(package="tests")
class Scale(L.Layer):
    """A registered custom layer with its own weight and a constructor argument."""

    def __init__(self, init=2.0, **kwargs):
        super().__init__(**kwargs)
        self.init = init

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

    def call(self, x):
        return x * self.w * self.init

    def get_config(self):
        return {**super().get_config(), "init": self.init}


@tl.saving.register_keras_serializable(package="tests")
class Tower(tl.Model):
    """A registered subclassed model with nested layers (a Sequential among them)."""

    def __init__(self, units=2, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.embed = L.Embedding(10, 4)
        self.norm = L.LayerNormalization()
        self.pool = L.GlobalAveragePooling1D()
        self.block = tl.Sequential([L.Dense(5, activation="relu"), L.BatchNormalization(),
                                    L.Dropout(0.25)])
        self.scale = Scale(0.5)
        self.head = L.Dense(units)

    def call(self, x, training=False):
        h = self.pool(self.norm(self.embed(x)))
        return self.head(self.scale(self.block(h, training=training)))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def sequential():
    return tl.Sequential([L.Input(shape=(8, 8, 2)),
                          L.Conv2D(3, 3, activation="relu", padding="same"),
                          L.BatchNormalization(),
                          L.MaxPooling2D(),
                          L.AveragePooling2D(pool_size=2, strides=1),
                          L.Flatten(),
                          L.Dropout(0.3),
                          L.Dense(4),
                          Scale(),
                          L.Activation("tanh"),
                          L.Dense(2)], name="seq")


@tl.saving.register_keras_serializable(package="tests")
def _concat(tensors):
    """A named, registered function for a Lambda layer (an unregistered one from a module
    outside trainlib/keras is refused under safe_mode, as Keras's)."""
    return tl.concat([tl.cast(t, tl.float32) for t in tensors], axis=-1)


def _functional_features(x, tokens):
    """(conv, counts, bins) of `functional` (and `functional_v1`) from the augmented image."""
    x = L.RandomBrightness(0.1, value_range=(-10, 10), seed=2)(x)
    x = L.RandomContrast(0.1, value_range=(-10, 10), seed=3)(x)
    x = L.Normalization(mean=[0.0, 0.1], variance=[1.0, 2.0])(L.CenterCrop(7, 7)(x))
    x = L.AlphaDropout(0.1, seed=4)(L.UnitNormalization()(L.GroupNormalization(groups=2)(x)))
    conv = L.Conv2D(2, 3, strides=2)(x)
    counts = L.CategoryEncoding(11, "count")(L.IntegerLookup(vocabulary=list(range(10)))(tokens))
    bins = L.CategoryEncoding(3, "multi_hot")(L.Discretization([0.0, 0.5])(
        L.GlobalAveragePooling2D()(conv)))
    return conv, counts, bins


def _functional_heads(conv, tokens):
    """The outputs b, c, d of `functional` (and `functional_v1`): normalization, attention
    and recurrent layers, one Dense called twice."""
    b = L.Dense(1, activation="sigmoid")(L.GlobalAveragePooling2D()(L.BatchNormalization()(conv)))
    emb = L.Embedding(10, 3)(tokens)
    h = L.MultiHeadAttention(2, 2)(emb, emb, use_causal_mask=True)
    h = L.GroupQueryAttention(head_dim=2, num_query_heads=2, num_key_value_heads=1)(h, emb)
    h = L.AdditiveAttention()([L.Attention(use_scale=True)([h, emb]), h])
    h = L.EinsumDense("abc,cd->abd", output_shape=(None, 3), bias_axes="d")(h)
    shared = L.Dense(2)
    c = shared(L.GlobalMaxPooling1D()(L.LayerNormalization()(h)))
    seq = L.TimeDistributed(L.Dense(3))(emb)
    seq = L.RNN([L.SimpleRNNCell(3), L.LSTMCell(3)], return_sequences=True)(seq)
    seq = L.Bidirectional(L.GRU(2, return_sequences=True))(seq)
    seq = L.SimpleRNN(3, return_sequences=True)(L.LSTM(3, return_sequences=True)(seq))
    d = shared(L.GlobalAveragePooling1D()(seq))   # a layer called twice
    return [b, c, d]


def functional():
    image = L.Input(shape=(8, 8, 2), name="image")
    tokens = L.Input(shape=(5,), dtype="int32", name="tokens")
    x = L.RandomFlip(seed=1)(L.Rescaling(0.5)(image))
    x = L.RandomCrop(8, 8, seed=5)(L.Resizing(9, 9)(x))
    x = L.RandomTranslation(0.1, 0.1, seed=6)(L.RandomZoom(0.1, seed=7)(
        L.RandomRotation(0.1, seed=8)(x)))
    conv, counts, bins = _functional_features(x, tokens)
    hashed = L.Hashing(4, output_mode="count")(tokens)
    frames = L.ConvLSTM2D(2, 3, padding="same")(L.Reshape((2, 4, 8, 2))(image))   # (4, 8, 2)
    rows = L.ConvLSTM1D(1, 3)(frames)                                          # (6, 1)
    cubes = L.ConvLSTM3D(1, 2)(L.Reshape((2, 2, 4, 4, 2))(image))              # (1, 3, 3, 1)
    recurrent = L.Concatenate()([L.Flatten()(rows), L.Flatten()(cubes)])
    a = L.Dense(1)(L.Lambda(_concat)([L.GlobalMaxPooling2D()(conv), counts, bins, hashed,
                                      recurrent]))
    return tl.Model([image, tokens], [a] + _functional_heads(conv, tokens), name="func")


def functional_v1():
    """`functional` as it was when trainlib's first-format fixtures were written (commit
    8537f7c, tests/fixtures/trainlib_v1): the model those files' weights fit."""
    image = L.Input(shape=(8, 8, 2), name="image")
    tokens = L.Input(shape=(5,), dtype="int32", name="tokens")
    x = L.RandomFlip(seed=1)(L.Rescaling(0.5)(image))
    conv, counts, bins = _functional_features(x, tokens)
    a = L.Dense(1)(L.Lambda(_concat)([L.GlobalMaxPooling2D()(conv), counts, bins]))
    return tl.Model([image, tokens], [a] + _functional_heads(conv, tokens), name="func")


def subclassed():
    return Tower(units=2, name="tower")


def families():
    """A functional model through the convolution, pooling, reshaping, merging, activation and
    regularization families (noise layers are identities in predict)."""
    image = L.Input(shape=(8, 8, 2), name="pixels")
    x = L.SpatialDropout2D(0.1)(L.GaussianDropout(0.1)(L.GaussianNoise(0.1)(image)))
    x = L.Cropping2D(1)(L.ZeroPadding2D(1)(x))
    x = L.SeparableConv2D(4, 3, padding="same")(L.DepthwiseConv2D(3, padding="same")(x))
    x = L.UpSampling2D(interpolation="bilinear")(x)                        # 16x16
    x = L.Conv2DTranspose(3, 3, strides=2, padding="same")(L.MaxPooling2D(4)(x))   # 8x8
    x = L.ELU()(L.PReLU()(L.LeakyReLU()(L.ReLU(max_value=6.0)(x))))
    v = L.Reshape((8, 8, 3, 1))(x)
    v = L.Conv3D(2, 2, padding="same")(L.Cropping3D(1)(L.ZeroPadding3D(1)(v)))
    v = L.UpSampling3D((2, 2, 1))(L.MaxPooling3D((2, 2, 1))(L.SpatialDropout3D(0.1)(v)))
    v = L.AveragePooling3D((2, 2, 1))(L.Conv3DTranspose(1, 2, padding="same")(v))
    g = L.Concatenate()([L.GlobalAveragePooling3D()(v), L.GlobalMaxPooling3D()(v)])
    s = L.Conv1D(4, 3, padding="causal")(L.Masking()(L.Reshape((8, 24))(x)))
    s = L.Cropping1D(1)(L.ZeroPadding1D(1)(L.SpatialDropout1D(0.1)(s)))
    s = L.SeparableConv1D(4, 2)(L.DepthwiseConv1D(2, padding="same")(s))   # 7 steps
    s = L.MaxPooling1D()(L.Conv1DTranspose(4, 2)(s))                          # 8 -> 4
    s = L.AveragePooling1D()(L.UpSampling1D()(s))                             # 4
    a = L.Flatten()(L.Permute((2, 1))(s))                                     # 16
    b = L.Dense(16)(g)
    m = L.Subtract()([L.Add()([a, b]), L.Multiply()([a, b])])
    m = L.Average()([L.Maximum()([m, a]), L.Minimum()([m, b])])
    r = L.RepeatVector(2)(L.ActivityRegularization(l2=0.01)(m))
    d = L.Flatten()(L.Dot(axes=2)([r, r]))
    out = L.Softmax()(L.Dense(2)(L.Concatenate()([m, d])))
    return tl.Model(image, L.Identity()(out), name="families")


def additions():
    """A functional model through the later layers: augmentation (identities in predict),
    adaptive pooling, RMS and spectral normalization, a reversible embedding, a hashed cross,
    a Pipeline."""
    image = L.Input(shape=(8, 8, 3), name="rgb")
    tokens = L.Input(shape=(5,), dtype="int32", name="tokens")
    left = L.Input(shape=(1,), dtype="int32", name="left")
    right = L.Input(shape=(1,), dtype="int32", name="right")
    x = L.Pipeline([L.RandomShear(0.1), L.RandomPerspective(0.5, 0.2), L.RandomErasing(0.5),
                    L.RandomGaussianBlur(0.5)])(image)
    for layer in (L.RandomColorJitter(brightness_factor=0.1, hue_factor=0.1),
                  L.RandomGrayscale(0.2), L.RandomHue(0.1), L.RandomSaturation(0.2),
                  L.RandomColorDegeneration(0.2), L.RandomInvert(0.1), L.RandomPosterization(6),
                  L.RandomSharpness(0.2), L.Solarization(0.1, 0.9), L.Equalization(),
                  L.MixUp(), L.CutMix(), L.AutoContrast()):
        x = layer(x)
    x = L.Rescaling(1 / 255.0)(x)
    p = L.AdaptiveMaxPooling2D((2, 2))(L.AdaptiveAveragePooling2D(4)(x))      # 2x2x3
    q = L.Reshape((16, 3))(L.AdaptiveAveragePooling2D(4)(x))
    q = L.AdaptiveMaxPooling1D(2)(L.AdaptiveAveragePooling1D(4)(q))            # 2x3
    v = L.Reshape((4, 4, 3, 1))(L.AdaptiveMaxPooling2D(4)(x))
    v = L.AdaptiveMaxPooling3D(1)(L.AdaptiveAveragePooling3D(2)(v))            # 1x1x1x1
    f = L.Concatenate()([L.Flatten()(p), L.Flatten()(q), L.Flatten()(v)])
    f = L.SpectralNormalization(L.Dense(4))(L.RMSNormalization()(f))
    embedding = L.ReversibleEmbedding(10, 4, tie_weights=False)
    e = L.GlobalAveragePooling1D()(embedding(tokens))
    logits = embedding(L.Dense(4)(e), reverse=True)                           # 10
    crossed = L.HashedCrossing(5, output_mode="one_hot")((left, right))
    out = L.Dense(2)(L.Concatenate()([f, logits, crossed]))
    return tl.Model([image, tokens, left, right], out, name="additions")


def data(kind, n=8, seed=0):
    """(x, y) for a model made by `kind()`."""
    rng = np.random.default_rng(seed)
    image = rng.normal(size=(n, 8, 8, 2)).astype(np.float32)
    tokens = rng.integers(0, 10, size=(n, 5)).astype(np.int32)
    if kind is sequential:
        return image, rng.normal(size=(n, 2)).astype(np.float32)
    if kind is families:
        return image, rng.uniform(size=(n, 2)).astype(np.float32)
    if kind is additions:
        rgb = rng.uniform(0, 255, size=(n, 8, 8, 3)).astype(np.float32)
        pair = rng.integers(0, 4, size=(2, n, 1)).astype(np.int32)
        return [rgb, tokens, pair[0], pair[1]], rng.normal(size=(n, 2)).astype(np.float32)
    if kind is functional:
        ys = [rng.normal(size=(n, 1)).astype(np.float32),
              rng.integers(0, 2, size=(n, 1)).astype(np.float32),
              rng.normal(size=(n, 2)).astype(np.float32),
              rng.normal(size=(n, 2)).astype(np.float32)]
        return [image, tokens], ys
    return tokens, rng.normal(size=(n, 2)).astype(np.float32)


def compiled(kind):
    """A model of `kind`, compiled with a loss/metric/optimizer mix, trained two steps."""
    model = kind()
    if kind is functional:
        model.compile(optimizer=tl.optim.Adam(learning_rate=0.01, amsgrad=True),
                      loss=["mse", tl.losses.BinaryCrossentropy(), tl.losses.Huber(delta=2.0),
                            tl.losses.mean_absolute_error],
                      loss_weights=[1.0, 0.5, 1.0, 2.0])
    elif kind in (families, additions):
        model.compile(optimizer=tl.optim.Adam(0.01), loss="mse")
    elif kind is sequential:
        schedule = tl.optim.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
        model.compile(optimizer=tl.optim.SGD(schedule, momentum=0.9, nesterov=True), loss="mse",
                      metrics=["mae", tl.metrics.RootMeanSquaredError()])
    else:
        model.compile(optimizer=tl.optim.RMSprop(0.01, clipnorm=1.0),
                      loss=tl.losses.MeanSquaredError(),
                      metrics=[tl.losses.mean_absolute_error])
    x, y = data(kind)
    tl.random.set_seed(1)
    model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    return model
