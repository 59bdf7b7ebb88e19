"""`EpochIterator`: one epoch's steps over a data adapter, grouped by `steps_per_execution`.

Owns: choosing the data adapter for what `fit`/`evaluate`/`predict` received
(arrays and tensors, a `tl.data.Dataset`, a generator; models/data_adapter.py),
the step count callbacks and progress bars are told, the grouping of batches
into executions of `steps_per_execution` steps, and Keras 3's warning when the
data runs out before `steps_per_epoch` steps; `keras.config.set_max_steps_per_epoch` caps
the steps of the iterators it makes.
Invariant: `__iter__` yields (first step, last step, batches) with the step
numbers Keras reports: a group's last step is first + steps_per_execution - 1,
even for a short final group.
"""
import warnings

from ..models import data_adapter
from ..settings import capped_steps

__all__ = ["EpochIterator"]

_OUT_OF_DATA = ("Your input ran out of data; interrupting training. Make sure that your dataset or "
                "generator can generate at least `steps_per_epoch * epochs` batches. You may need "
                "to use the `.repeat()` function when building your dataset.")


class EpochIterator:
    """Iterates an epoch of batches (x, y, sample_weight), `steps_per_execution` at a time.

    Args:
        x, y, sample_weight, batch_size, shuffle, class_weight: as `fit` takes them.
        steps_per_epoch: the steps of an epoch (default: one pass over the data).
        steps_per_execution: batches per group.
        batches: an already made batch source (used instead of x, y...).

    Example:
        >>> iterator = EpochIterator(x, y, batch_size=32)
        >>> for begin, end, group in iterator:
        ...     logs = train_function(group[0])
    """

    def __init__(self, x=None, y=None, sample_weight=None, batch_size=None, steps_per_epoch=None,
                 shuffle=False, class_weight=None, steps_per_execution=1, batches=None):
        if batches is None:
            steps_per_epoch = capped_steps(steps_per_epoch)   # keras.config's debugging cap
            batches = data_adapter.make_batches(x, y, sample_weight, batch_size, shuffle,
                                                class_weight, steps_per_epoch)
        self.batches = batches
        self.steps_per_epoch = steps_per_epoch
        self.steps_per_execution = int(steps_per_execution)
        self.ran_out = False          # the last epoch stopped before steps_per_epoch steps

    @property
    def num_batches(self):
        """The steps of one epoch, or None when unknown (a generator without steps)."""
        batches = self.batches
        if isinstance(batches, data_adapter.ArrayBatches):
            return batches.steps
        return getattr(batches, "length", None)

    def first_batch(self):
        """The first batch, for building the model before the first step."""
        return self.batches.first_batch()

    def reset(self):
        """The next epoch starts a new pass over the data (evaluate does, as Keras)."""
        if hasattr(self.batches, "reset"):
            self.batches.reset()

    def __iter__(self):
        size = self.steps_per_execution
        step, group = 0, []
        self.ran_out = False
        if size == 1:     # the common case, kept lean: it runs once per train step
            for batch in self.batches:
                yield step, step, (batch,)
                step += 1
        else:
            for batch in self.batches:
                group.append(batch)
                if len(group) == size:
                    yield step, step + size - 1, group
                    step += size
                    group = []
            if group:
                yield step, step + size - 1, group
                step += len(group)
        if self.steps_per_epoch is not None and step < self.steps_per_epoch:
            self.ran_out = True
            warnings.warn(_OUT_OF_DATA, stacklevel=2)
