"""`tl.version`: the release, as TensorFlow's `tf.version` module gives it."""
VERSION = "0.1.0"
GIT_VERSION = "unknown"
COMPILER_VERSION = "python"
GRAPH_DEF_VERSION = 1
GRAPH_DEF_VERSION_MIN_CONSUMER = 0
GRAPH_DEF_VERSION_MIN_PRODUCER = 0
KERAS_API_VERSION = "3.15.1"   # the Keras release whose API trainlib.keras mirrors


def keras_version():
    """`keras.version()`: the Keras release whose API `trainlib.keras` mirrors."""
    return KERAS_API_VERSION
