"""tl.image's random colour adjustments and the stateless_random_* image functions (no
TensorFlow needed): each result is the matching adjust_*/flip/crop of the image by a draw
inside the stated range, stateless ones repeat for a seed (eagerly and traced) and change
with it, and bad ranges raise naming the function."""
import numpy as np
import pytest

import trainlib as tl

X = np.random.default_rng(4).uniform(0.1, 0.9, size=(3, 4, 5, 3)).astype(np.float32)


def _brightness_delta(out):
    delta = out.numpy() - X
    assert np.allclose(delta, delta.flat[0], atol=1e-6)   # one delta for the whole batch
    return delta.flat[0]


def test_brightness_draws_inside_the_range_and_stateless_repeats():
    deltas = [_brightness_delta(tl.image.random_brightness(X, 0.2)) for _ in range(5)]
    assert all(-0.2 <= d < 0.2 for d in deltas) and len(set(deltas)) > 1
    traced = tl.function(lambda x, s: tl.image.stateless_random_brightness(x, 0.3, s))
    a = _brightness_delta(tl.image.stateless_random_brightness(X, 0.3, (7, 8)))
    assert a == _brightness_delta(traced(X, tl.constant([7, 8]))) and -0.3 <= a < 0.3
    others = {_brightness_delta(tl.image.stateless_random_brightness(X, 0.3, (7, k)))
              for k in range(5)}
    assert len(others) > 1


@pytest.mark.parametrize("random_fn, adjust, lower, upper", [
    ("contrast", tl.image.adjust_contrast, 0.5, 1.5),
    ("saturation", tl.image.adjust_saturation, 0.2, 1.8),
    ("hue", tl.image.adjust_hue, -0.4, 0.4),
])
def test_results_are_the_adjustment_by_some_factor_in_range(random_fn, adjust, lower, upper):
    args = (upper,) if random_fn == "hue" else (lower, upper)
    out = getattr(tl.image, f"stateless_random_{random_fn}")(X, *args, seed=(1, 2)).numpy()
    again = getattr(tl.image, f"stateless_random_{random_fn}")(X, *args, seed=(1, 2)).numpy()
    np.testing.assert_array_equal(out, again)
    assert _closest_adjustment(adjust, out, lower, upper) < 1e-4
    stateful = getattr(tl.image, f"random_{random_fn}")(X, *args, seed=3).numpy()
    assert _closest_adjustment(adjust, stateful, lower, upper) < 1e-4


def _closest_adjustment(adjust, out, lower, upper):
    """The smallest max-error of adjust(X, f) against `out` over f in [lower, upper] (a coarse
    grid, then finer grids around the best)."""
    for _ in range(4):
        grid = np.linspace(lower, upper, 21)
        errors = [np.abs(adjust(X, f).numpy() - out).max() for f in grid]
        best, step = grid[int(np.argmin(errors))], grid[1] - grid[0]
        lower, upper = best - step, best + step
    return min(errors)


def test_stateless_flips_and_crops():
    flipped = tl.image.stateless_random_flip_left_right(X, (3, 4)).numpy()
    for image, result in zip(X, flipped):
        assert np.array_equal(result, image) or np.array_equal(result, image[:, ::-1])
    np.testing.assert_array_equal(flipped,
                                  tl.image.stateless_random_flip_left_right(X, (3, 4)).numpy())
    up = tl.image.stateless_random_flip_up_down(X[0], (0, 1)).numpy()
    assert np.array_equal(up, X[0]) or np.array_equal(up, X[0, ::-1])
    crop = tl.image.stateless_random_crop(X, [3, 2, 2, 3], (5, 5)).numpy()
    windows = [X[:, i:i + 2, j:j + 2] for i in range(3) for j in range(4)]
    assert any(np.array_equal(crop, w) for w in windows)
    np.testing.assert_array_equal(crop, tl.image.stateless_random_crop(X, [3, 2, 2, 3], (5, 5)))


def test_bad_ranges_name_the_function():
    with pytest.raises(ValueError, match="random_hue: max_delta must be <= 0.5"):
        tl.image.random_hue(X, 0.6)
    with pytest.raises(ValueError, match="stateless_random_contrast: upper must be > lower"):
        tl.image.stateless_random_contrast(X, 1.0, 1.0, (1, 2))
    with pytest.raises(ValueError, match="random_saturation: lower must be non-negative"):
        tl.image.random_saturation(X, -0.5, 1.0)
    with pytest.raises(ValueError, match="random_brightness: max_delta must be non-negative"):
        tl.image.random_brightness(X, -0.1)
    with pytest.raises(ValueError, match="stateless_random_flip_up_down: needs a seed"):
        tl.image.stateless_random_flip_up_down(X, None)
