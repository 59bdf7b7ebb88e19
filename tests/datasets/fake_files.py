"""Small files in the formats Keras's dataset loaders download (npz, IDX gz, CIFAR pickled
batches in a tar.gz), written into a folder a local test server serves."""
import gzip
import hashlib
import io
import pickle
import tarfile

import numpy as np


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ragged(rng, n, vocab):
    out = np.empty(n, dtype=object)
    out[:] = [rng.integers(1, vocab, size=rng.integers(2, 12)).tolist() for _ in range(n)]
    return out


def write_all(root, seed=0):
    """Writes mnist.npz, boston_housing.npz, california_housing.npz, imdb.npz, reuters.npz, the four fashion-mnist
    files, cifar-10-python.tar.gz and cifar-100-python.tar.gz under `root`."""
    rng = np.random.default_rng(seed)
    u8 = lambda *shape: rng.integers(0, 256, size=shape, dtype=np.uint8)  # noqa: E731
    np.savez(root / "mnist.npz", x_train=u8(6, 28, 28), y_train=u8(6) % 10,
             x_test=u8(4, 28, 28), y_test=u8(4) % 10)
    np.savez(root / "boston_housing.npz", x=rng.normal(size=(20, 13)), y=rng.normal(size=20))
    np.savez(root / "imdb.npz", x_train=_ragged(rng, 12, 40), y_train=u8(12) % 2,
             x_test=_ragged(rng, 8, 40), y_test=u8(8) % 2)
    np.savez(root / "reuters.npz", x=_ragged(rng, 15, 50), y=u8(15) % 46)
    for name, header, data in (("train-labels-idx1-ubyte.gz", 8, u8(5) % 10),
                               ("train-images-idx3-ubyte.gz", 16, u8(5, 28, 28)),
                               ("t10k-labels-idx1-ubyte.gz", 8, u8(3) % 10),
                               ("t10k-images-idx3-ubyte.gz", 16, u8(3, 28, 28))):
        with gzip.open(root / name, "wb") as f:
            f.write(bytes(header) + data.tobytes())
    batches = {f"cifar-10-batches-py/data_batch_{i}": {b"data": u8(4, 3072),
                                                       b"labels": (u8(4) % 10).tolist()}
               for i in range(1, 6)}
    batches["cifar-10-batches-py/test_batch"] = {b"data": u8(4, 3072),
                                                 b"labels": (u8(4) % 10).tolist()}
    _tar(root / "cifar-10-python.tar.gz", batches)
    _tar(root / "cifar-100-python.tar.gz", {
        f"cifar-100-python/{part}": {b"data": u8(n, 3072), b"fine_labels": (u8(n) % 100).tolist(),
                                     b"coarse_labels": (u8(n) % 20).tolist()}
        for part, n in (("train", 7), ("test", 3))})
    write_california_housing(root)


def write_california_housing(root, seed=1):
    """california_housing.npz: 700 rows of 8 float32 features and a float32 price (enough for
    the loader's "small" version, the first 600)."""
    rng = np.random.default_rng(seed)
    np.savez(root / "california_housing.npz", x=rng.normal(size=(700, 8)).astype(np.float32),
             y=rng.uniform(1e4, 5e5, size=700).astype(np.float32))


def _tar(path, members):
    with tarfile.open(path, "w:gz") as tar:
        for name, value in members.items():
            data = pickle.dumps(value, protocol=4)  # Python 2 wrote the real ones: no _codecs
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
