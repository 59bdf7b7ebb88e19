"""Timing helper shared by the bench scripts: median of repeated timeit runs, in microseconds."""
import statistics
import timeit


def median_us(fn, number=None, repeat=7):
    """Median time of one call of `fn`, in microseconds."""
    if number is None:
        number, total = 1, 0.0
        while total < 0.05:
            number *= 2
            total = timeit.timeit(fn, number=number)
    runs = timeit.repeat(fn, number=number, repeat=repeat)
    return statistics.median(runs) / number * 1e6
