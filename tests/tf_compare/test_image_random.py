"""TensorFlow vs trainlib for the random image adjustments (`random_brightness` ...
`stateless_random_crop`, the JPEG quality ones): the draws come from other generators, so the values differ; the
shapes, dtypes, the range checks that raise, and the repeatability of the stateless ones must
agree, eagerly and inside a function. `adjust_jpeg_quality` agrees within libjpeg rounding."""
import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")
import trainlib as tl  # noqa: E402

from .compare import Raised, check_kind, in_function, outcome  # noqa: E402

X = np.random.default_rng(8).uniform(size=(2, 4, 5, 3)).astype(np.float32)
U8 = (X * 255).astype(np.uint8)

PROGRAMS = {
    "brightness": lambda lib: lib.image.random_brightness(X, 0.2, seed=1),
    "brightness_negative": lambda lib: lib.image.random_brightness(X, -0.2),
    "contrast": lambda lib: lib.image.random_contrast(X[0], 0.5, 1.5, seed=2),
    "contrast_empty": lambda lib: lib.image.random_contrast(X, 1.5, 1.5),
    "hue": lambda lib: lib.image.random_hue(X, 0.1),
    "hue_too_far": lambda lib: lib.image.random_hue(X, 0.51),
    "saturation_uint8": lambda lib: lib.image.random_saturation(U8, 0.5, 2.0),
    "saturation_negative": lambda lib: lib.image.random_saturation(X, -1.0, 2.0),
    "stateless_brightness": lambda lib: lib.image.stateless_random_brightness(X, 0.3, (1, 2)),
    "stateless_contrast": lambda lib: lib.image.stateless_random_contrast(U8, 0.3, 0.9, (1, 2)),
    "stateless_hue": lambda lib: lib.image.stateless_random_hue(X[0], 0.5, (3, 2)),
    "stateless_hue_negative": lambda lib: lib.image.stateless_random_hue(X, -0.1, (3, 2)),
    "stateless_saturation": lambda lib: lib.image.stateless_random_saturation(X, 0.1, 0.2,
                                                                              (4, 4)),
    "stateless_flip_lr": lambda lib: lib.image.stateless_random_flip_left_right(X, (1, 9)),
    "stateless_flip_ud": lambda lib: lib.image.stateless_random_flip_up_down(U8[0], (2, 9)),
    "stateless_crop": lambda lib: lib.image.stateless_random_crop(X, [2, 3, 3, 3], (5, 6)),
    "jpeg_quality": lambda lib: lib.image.random_jpeg_quality(X[0], 30, 90, seed=4),
    "jpeg_quality_range": lambda lib: lib.image.random_jpeg_quality(X[0], 30, 101),
    "jpeg_quality_empty": lambda lib: lib.image.random_jpeg_quality(X[0], 30, 30),
    "stateless_jpeg_quality": lambda lib: lib.image.stateless_random_jpeg_quality(
        U8[0], 10, 20, (1, 2)),
}


@pytest.mark.parametrize("graph", [False, True], ids=["eager", "graph"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program(name, graph):
    program = in_function(PROGRAMS[name], graph)
    theirs, ours = check_kind(program)
    if not isinstance(theirs, Raised) and name.startswith("stateless"):
        np.testing.assert_array_equal(outcome(program, tl).numpy(), ours.numpy())


@pytest.mark.parametrize("quality", [10, 75, 95])
def test_adjust_jpeg_quality_within_libjpeg_rounding(quality):
    image = np.broadcast_to(np.linspace(0, 1, 16, dtype=np.float32)[None, :, None], (16, 16, 3))
    theirs = tf.image.adjust_jpeg_quality(image, quality).numpy()
    ours = tl.image.adjust_jpeg_quality(image, tl.constant(quality)).numpy()
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert np.abs(ours - theirs).max() < 0.06 and np.abs(ours - image).mean() < 0.05
