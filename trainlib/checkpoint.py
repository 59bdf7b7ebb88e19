"""Training checkpoints: `tl.train.Checkpoint`, `CheckpointManager`, `latest_checkpoint`.

Owns: the object graph of a checkpoint (Variables found from a root object through
attributes, lists, tuples and dicts of Modules, optimizers and other Checkpoints, each
named by its shortest attribute path, as TensorFlow's object-based checkpoints),
trainlib's checkpoint format, restoration (now, or deferred until a Variable is
created), and the `checkpoint` state file a directory of checkpoints keeps.

The format, for a prefix `dir/ckpt-3`: `dir/ckpt-3.data-<token>.npz` holds the arrays
(members `v0`, `v1`, ...; never pickled), and `dir/ckpt-3.index`, a JSON document,
names that shard and maps each attribute path ("net/l1/kernel") to its member, dtype
and shape. Invariants: each file is written atomically (trainlib/file_io.py), the
shard before the index, and the directory's `checkpoint` state file last, so a save
killed at any instant leaves every earlier checkpoint readable and the state file
naming one of them; loads are bounded (`LoadBudget`) and every defect of a file is a
`LoadError` naming it.
"""
import json
import os
import re
import time

import numpy as np

from .file_io import LoadBudget, TEMP_PREFIX, array_bytes, read_json, read_npz, remove_stale, \
    write_file_atomically
from .graph.context import eager_scope
from .graph.serialization import LoadError
from .graph.variables import Module, Variable, children_changed, unwatch_children, watch_children
from .optim.base import Optimizer
from .graph.properties import read_only

__all__ = ["Checkpoint", "CheckpointManager", "CheckpointOptions", "latest_checkpoint"]

FORMAT = "trainlib.checkpoint"
VERSION = 1
INDEX_SUFFIX = ".index"
STATE_FILE = "checkpoint"


# ------------------------------------------------------------------ the object graph

def _escape(name):
    return str(name).replace("%", "%25").replace("/", "%2F")


def _is_trackable(value):
    return isinstance(value, (Variable, Module, Optimizer, Checkpoint))


def _children(obj):
    """[(name, child)] of one object of the graph, in a fixed order."""
    if isinstance(obj, Checkpoint):
        return list(obj._children.items())
    if isinstance(obj, Optimizer):
        out = [("iterations", obj._iteration_counter)]
        if getattr(obj, "_learning_rate", None) is not None:
            out.append(("learning_rate", obj._learning_rate))
        return out + [(f"slot-{i}", v) for i, v in enumerate(obj._variables)]
    if isinstance(obj, Module):
        items = sorted(vars(obj).items())
    elif isinstance(obj, (list, tuple)):
        items = [(str(i), v) for i, v in enumerate(obj)]
    elif isinstance(obj, dict):
        items = sorted((str(k), v) for k, v in obj.items())
    else:
        return []
    return [(name, value) for name, value in items
            if _is_trackable(value) or (isinstance(value, (list, tuple, dict)) and value)]


def _variables_by_path(root):
    """{path: Variable} for every Variable reachable from `root`, each under its shortest
    path (breadth first, children in `_children` order)."""
    seen, out = {id(root)}, {}
    frontier = [("", root)]
    while frontier:
        following = []
        for path, obj in frontier:
            for name, child in _children(obj):
                if id(child) in seen:
                    continue
                seen.add(id(child))
                child_path = f"{path}/{_escape(name)}" if path else _escape(name)
                if isinstance(child, Variable):
                    out[child_path] = child
                else:
                    following.append((child_path, child))
        frontier = following
    return out


def _child(obj, name):
    for child_name, child in _children(obj):
        if _escape(child_name) == name:
            return child
    return None


# ------------------------------------------------------------------ files

def _write(prefix, variables):
    """Writes `variables` ({path: Variable}) under `prefix`: the shard, then the index."""
    prefix = os.path.abspath(os.fspath(prefix))
    folder, stem = os.path.split(prefix)
    arrays, entries = {}, {}
    for i, (path, variable) in enumerate(variables.items()):
        array = np.asarray(variable.numpy())
        arrays[f"v{i}"] = array
        entries[path] = {"key": f"v{i}", "dtype": array.dtype.name, "shape": list(array.shape)}
    shard = f"{stem}.data-{os.urandom(4).hex()}.npz"
    remove_stale(folder, _KILLED_TEMPS.fullmatch)   # killed saves' of any checkpoint here
    write_file_atomically(os.path.join(folder, shard), lambda f: np.savez(f, **arrays))
    index = {"format": FORMAT, "version": VERSION, "shard": shard, "variables": entries}
    write_file_atomically(prefix + INDEX_SUFFIX,
                          lambda f: f.write(json.dumps(index, indent=1).encode()))
    _remove_shards(folder, stem, keep=shard)   # of earlier writes of this same prefix
    return prefix


_KILLED_TEMPS = re.compile(re.escape(TEMP_PREFIX) + r".+(\.data-[0-9a-f]+\.npz|"
                           + re.escape(INDEX_SUFFIX) + r")\.[0-9a-f]+")


def _remove_shards(folder, stem, keep=None):
    pattern = re.compile(re.escape(stem) + r"\.data-[0-9a-f]+\.npz")
    for name in os.listdir(folder):
        if name != keep and pattern.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass


def _read(prefix, max_bytes=None, max_member_bytes=None):
    """{path: numpy array} of the checkpoint at `prefix`; LoadError for any defect."""
    prefix = os.fspath(prefix)
    index_path = prefix + INDEX_SUFFIX
    budget = LoadBudget(index_path, max_bytes, max_member_bytes)
    if not os.path.lexists(index_path):
        raise NotFoundError(f"no checkpoint at {prefix!r} ({index_path!r} does not exist); "
                            "pass the prefix save() or write() returned, or a directory of "
                            "checkpoints")
    try:
        index = json.loads(read_json(index_path, budget))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LoadError(f"{index_path}: not a trainlib checkpoint index ({e})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise LoadError(f"{index_path}: not a trainlib checkpoint index (no format "
                        f"{FORMAT!r}); TensorFlow's own checkpoints are not read")
    if index.get("version") != VERSION:
        raise LoadError(f"{index_path}: checkpoint version {index.get('version')!r}, this "
                        f"trainlib reads version {VERSION}")
    shard, entries = index.get("shard"), index.get("variables")
    if not isinstance(shard, str) or os.path.basename(shard) != shard or \
            not isinstance(entries, dict):
        raise LoadError(f"{index_path}: malformed index (shard {shard!r})")
    declared = 0
    for path, entry in entries.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("key"), str) and
                isinstance(entry.get("shape"), list) and isinstance(entry.get("dtype"), str)):
            raise LoadError(f"{index_path}: malformed entry for {path!r}: {entry!r}")
        declared += array_bytes(entry["shape"], entry["dtype"])
    budget.size_to(declared)
    shard_path = os.path.join(os.path.dirname(index_path), shard)
    try:
        arrays = read_npz(shard_path, budget, where=f"shard {shard}")
    except FileNotFoundError:
        raise LoadError(f"{index_path}: its shard {shard!r} is missing") from None
    out = {}
    for path, entry in entries.items():
        array = arrays.get(entry["key"])
        if array is None or array.dtype.name != entry["dtype"] or \
                list(array.shape) != entry["shape"]:
            raise LoadError(f"{index_path}: {path!r} does not match its shard (expected "
                            f"{entry['dtype']} {entry['shape']})")
        out[path] = array
    return out


class NotFoundError(LoadError, FileNotFoundError):
    """No checkpoint at the path given."""


def _read_state(directory):
    """(latest, [all]) relative names from `directory`'s state file, or (None, [])."""
    path = os.path.join(os.fspath(directory), STATE_FILE)
    if not os.path.isfile(path):
        return None, []
    try:
        text = read_json(path, LoadBudget(path)).decode()
    except (LoadError, UnicodeDecodeError, OSError):
        return None, []
    latest, everything = None, []
    for line in text.splitlines():
        match = re.fullmatch(r'\s*(\w+):\s*(".*")\s*', line)
        if match is None:
            continue
        try:
            value = json.loads(match.group(2))
        except json.JSONDecodeError:
            continue
        if match.group(1) == "model_checkpoint_path":
            latest = value
        elif match.group(1) == "all_model_checkpoint_paths":
            everything.append(value)
    return latest, everything


def _write_state(directory, latest, everything):
    """Writes the state file (TensorFlow's text form), atomically: the commit point of a save."""
    lines = [f"model_checkpoint_path: {json.dumps(_relative(directory, latest))}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(_relative(directory, p))}"
              for p in everything]
    text = "\n".join(lines) + "\n"
    write_file_atomically(os.path.join(directory, STATE_FILE), lambda f: f.write(text.encode()))


def _relative(directory, path):
    path = os.fspath(path)
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint a directory's state file names, or None.

    Args:
        checkpoint_dir: the directory `Checkpoint.save` or a `CheckpointManager` wrote to.
        latest_filename: accepted for TensorFlow's signature (the state file is `checkpoint`).

    Example:
        >>> ckpt.restore(tl.train.latest_checkpoint("./tf_ckpts"))
    """
    latest, _ = _read_state(checkpoint_dir)
    if latest is None:
        return None
    prefix = latest if os.path.isabs(latest) else os.path.join(os.fspath(checkpoint_dir), latest)
    return prefix if os.path.isfile(prefix + INDEX_SUFFIX) else None


def _delete(prefix):
    folder, stem = os.path.split(os.path.abspath(prefix))
    try:
        os.remove(prefix + INDEX_SUFFIX)
    except FileNotFoundError:
        pass
    _remove_shards(folder, stem)


# ------------------------------------------------------------------ restoring

class _Tree:
    """Checkpoint paths split at "/": a node's value (a path) and its children."""

    def __init__(self):
        self.value = None
        self.children = {}

    @classmethod
    def of(cls, paths):
        root = cls()
        for path in paths:
            node = root
            for name in path.split("/"):
                node = node.children.setdefault(name, cls())
            node.value = path
        return root

    def paths(self):
        out = [self.value] if self.value is not None else []
        for child in self.children.values():
            out += child.paths()
        return out


def _watchable(obj):
    return isinstance(obj, (Module, Optimizer, Checkpoint))


class CheckpointLoadStatus:
    """What a `restore` matched; values for objects not yet created wait for them.

    A Variable created later at a path the checkpoint holds (a layer built after the
    restore, an optimizer's slots) receives its value when it is assigned to its
    attribute (deferred restoration, as TensorFlow).
    """

    def __init__(self, root, values, save_path):
        self._root = root
        self._values = values
        self._save_path = save_path
        self._consumed = set()
        self._pending = {}   # id(anchor) -> (anchor, [(relative names, tree)])
        self._staged = []    # (variable, path): checked, assigned once all are checked
        try:
            self._resolve(root, _Tree.of(values), root, [])
        except BaseException:   # a failed restore changes nothing and leaves nothing waiting
            for anchor, _ in self._pending.values():
                unwatch_children(anchor)
            self._pending.clear()
            raise
        self._apply()

    def _apply(self):
        staged, self._staged = self._staged, []
        with eager_scope():
            for variable, path in staged:
                variable.assign(self._values[path])
                self._consumed.add(path)

    def _resolve(self, obj, tree, anchor, rel):
        if _watchable(obj):
            anchor, rel = obj, []
        if tree.value is not None:
            if not isinstance(obj, Variable):
                raise ValueError(f"checkpoint {self._save_path!r}: {tree.value!r} holds a value, "
                                 f"but that path is a {type(obj).__name__}, not a Variable")
            self._assign(obj, tree.value)
        for name, sub in tree.children.items():
            child = _child(obj, name)
            if child is None or (isinstance(child, (list, tuple, dict)) and not child):
                self._wait(anchor, rel + [name], sub)
            else:
                self._resolve(child, sub, anchor, rel + [name])

    def _assign(self, variable, path):
        value = self._values[path]
        if tuple(variable.shape) != value.shape and variable.shape.is_fully_defined():
            raise ValueError(f"checkpoint {self._save_path!r}: {path!r} has shape {value.shape}, "
                             f"the Variable {variable.name} has shape {tuple(variable.shape)}")
        if variable.dtype.name != value.dtype.name:
            raise ValueError(f"checkpoint {self._save_path!r}: {path!r} has dtype "
                             f"{value.dtype.name}, the Variable {variable.name} has dtype "
                             f"{variable.dtype.name}")
        self._staged.append((variable, path))

    def _wait(self, anchor, rel, tree):
        entry = self._pending.get(id(anchor))
        if entry is None:
            entry = self._pending[id(anchor)] = (anchor, [])
            watch_children(anchor, self._children_changed)
        entry[1].append((rel, tree))

    def _children_changed(self, anchor):
        _, waiting = self._pending.pop(id(anchor))
        unwatch_children(anchor)
        try:
            for rel, tree in waiting:   # walked again from the anchor; still missing: waits again
                self._resolve(anchor, _subtree(rel, tree), anchor, [])
        except BaseException:
            self._staged.clear()
            raise
        self._apply()

    def _unmatched_variables(self):
        restored = {id(v) for v in self._restored_variables()}
        return [p for p, v in _variables_by_path(self._root).items() if id(v) not in restored]

    def _restored_variables(self):
        out = []
        for path in self._consumed:
            node = self._root
            for name in path.split("/"):
                node = _child(node, name) if node is not None else None
            if node is not None:
                out.append(node)
        return out

    def assert_consumed(self):
        """Asserts that every value of the checkpoint was restored and every Variable
        reachable from the root received one.

        Raises:
            AssertionError: naming the paths left over on either side.
        """
        unused = sorted(set(self._values) - self._consumed)
        if unused:
            raise AssertionError(f"Unresolved object in checkpoint {self._save_path!r}: values "
                                 f"for {unused} were not restored (their objects do not exist "
                                 "yet, or not at those attribute paths)")
        self.assert_existing_objects_matched()
        return self

    def assert_existing_objects_matched(self):
        """Asserts that every Variable reachable from the root now has a restored value.

        Raises:
            AssertionError: naming the Variables' paths that the checkpoint does not hold.
        """
        unmatched = self._unmatched_variables()
        if unmatched:
            raise AssertionError(f"Unrestored objects: checkpoint {self._save_path!r} holds no "
                                 f"values for {unmatched}")
        return self

    def assert_nontrivial_match(self):
        """Asserts that something besides the save counter was restored."""
        if not self._consumed - {"save_counter"}:
            raise AssertionError(f"nothing was restored from {self._save_path!r}")
        return self

    def expect_partial(self):
        """Declares that a partial restore is intended (TensorFlow's warnings are silenced;
        trainlib warns about nothing). Returns the status."""
        return self

    def initialize_or_restore(self, session=None):
        """Nothing to run eagerly: values were assigned by `restore`."""

    def run_restore_ops(self, session=None):
        """Nothing to run eagerly: values were assigned by `restore`."""


def _subtree(rel, tree):
    root = node = _Tree()
    for name in rel[:-1]:
        node = node.children.setdefault(name, _Tree())
    node.children[rel[-1]] = tree
    return root


class _InitializationOnlyStatus(CheckpointLoadStatus):
    """The status of `restore(None)`: nothing to restore."""

    def __init__(self, root):
        super().__init__(root, {}, None)

    def assert_consumed(self):
        raise AssertionError("no checkpoint was restored (restore(None))")

    assert_existing_objects_matched = assert_nontrivial_match = assert_consumed


# ------------------------------------------------------------------ public classes

class CheckpointOptions:
    """Options of a save or restore (accepted for TensorFlow's signature; trainlib writes
    one host-side format, so `experimental_io_device` and friends change nothing)."""

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_sharding_callback=None, experimental_skip_slot_variables=False):
        self.experimental_io_device = experimental_io_device
        self.enable_async = enable_async or experimental_enable_async_checkpoint
        self.experimental_skip_slot_variables = experimental_skip_slot_variables


class Checkpoint:
    """Saves and restores the Variables of Modules, models, optimizers and Variables,
    matched by attribute path (`net/l1/kernel`), as TensorFlow's `tf.train.Checkpoint`.

    Args:
        root: an object whose children become the checkpoint's root's.
        **kwargs: the objects to track, by name (Variables, Modules, models, layers,
            optimizers, other Checkpoints, or lists and dicts of them).

    Raises:
        ValueError: for an argument that holds no state trainlib tracks.

    Example:
        >>> ckpt = tl.train.Checkpoint(step=tl.Variable(1), net=net, optimizer=opt)
        >>> path = ckpt.save("./tf_ckpts/ckpt")        # "./tf_ckpts/ckpt-1"
        >>> ckpt.restore(path).assert_consumed()
    """

    def __init__(self, root=None, **kwargs):
        object.__setattr__(self, "_children", {})
        object.__setattr__(self, "_save_counter", None)
        if root is not None:
            for name, child in _children(root):
                self._children[name] = child
        for name, value in sorted(kwargs.items()):
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        if not (_is_trackable(value) or isinstance(value, (list, tuple, dict))):
            raise ValueError(f"Checkpoint was expecting a trackable object (a Variable, Module, "
                             f"model, optimizer, Checkpoint, or a list or dict of them) for "
                             f"{name!r}, got {type(value).__name__}: {value!r}")
        object.__setattr__(self, name, value)
        self._children[name] = value
        children_changed(self)

    @property
    def save_counter(self):
        """How many times `save` ran (an int64 Variable, saved with the checkpoint)."""
        if self._save_counter is None:
            with eager_scope():
                counter = Variable(np.int64(0), trainable=False, name="save_counter")
            object.__setattr__(self, "_save_counter", counter)
            self._children["save_counter"] = counter
        return self._save_counter

    def write(self, file_prefix, options=None):
        """Writes the checkpoint to exactly `file_prefix` (files `<prefix>.index` and
        `<prefix>.data-*.npz`), atomically; the save counter and state file are untouched.

        Returns:
            The prefix written (for `read`).
        """
        _write(file_prefix, _variables_by_path(self))
        return os.fspath(file_prefix)

    def save(self, file_prefix, options=None):
        """Writes a numbered checkpoint `<file_prefix>-<save_counter>` and names it in the
        directory's `checkpoint` state file (what `tl.train.latest_checkpoint` reads).

        Returns:
            The prefix written, for `restore`.
        """
        with eager_scope():
            self.save_counter.assign_add(1)
        prefix = f"{os.fspath(file_prefix)}-{int(self.save_counter.numpy())}"
        self.write(prefix)
        directory = os.path.dirname(os.path.abspath(prefix))
        _write_state(directory, prefix, [prefix])
        return prefix

    def restore(self, save_path, options=None):
        """Restores the values saved at `save_path` into the tracked objects, matched by
        attribute path; values for objects created later are restored when they appear.

        Args:
            save_path: a prefix from `save`/`write`/`latest_checkpoint`, a directory of
                checkpoints (its latest), or None (nothing to restore).

        Returns:
            A status with `assert_consumed`, `assert_existing_objects_matched`,
            `expect_partial`.

        Raises:
            NotFoundError: (a LoadError) when nothing is saved at `save_path`.
            LoadError: for a damaged or foreign file.
            ValueError: when a value's shape or dtype does not fit its Variable.
        """
        if save_path is None:
            return _InitializationOnlyStatus(self)
        save_path = os.fspath(save_path)
        if os.path.isdir(save_path):
            latest = latest_checkpoint(save_path)
            if latest is None:
                raise NotFoundError(f"no checkpoint in the directory {save_path!r}")
            save_path = latest
        values = _read(save_path)
        if "save_counter" in values:
            self.save_counter  # noqa: B018 -- created so that it is restored
        return CheckpointLoadStatus(self, values, save_path)

    read = restore


class CheckpointManager:
    """Numbers, keeps and deletes checkpoints in one directory, as TensorFlow's.

    Args:
        checkpoint: the `Checkpoint` to save.
        directory: where checkpoints go (created as needed).
        max_to_keep: how many of the newest to keep (None: all).
        keep_checkpoint_every_n_hours: also keep one checkpoint per this many hours.
        checkpoint_name: the prefix's stem (default "ckpt").
        step_counter: a Variable counting steps; `save` numbers by it when no number is
            given, and `checkpoint_interval` needs it.
        checkpoint_interval: `save` writes only when `step_counter` advanced this many
            steps since the last checkpoint.
        init_fn: called by `restore_or_initialize` when there is nothing to restore.

    Example:
        >>> manager = tl.train.CheckpointManager(ckpt, "./tf_ckpts", max_to_keep=3)
        >>> ckpt.restore(manager.latest_checkpoint)
        >>> manager.save()
    """

    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        if max_to_keep is not None and max_to_keep <= 0:
            raise ValueError(f"max_to_keep must be a positive int or None, got {max_to_keep!r}")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("checkpoint_interval needs a step_counter")
        self._checkpoint = checkpoint
        self._directory = os.fspath(directory)
        self._max_to_keep = max_to_keep
        self._keep_hours = keep_checkpoint_every_n_hours
        self._prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._interval = checkpoint_interval
        self._init_fn = init_fn
        self._last_step = None
        self._last_preserved = time.time()
        latest, everything = _read_state(self._directory)
        self._checkpoints = [p if os.path.isabs(p) else os.path.join(self._directory, p)
                             for p in everything
                             if os.path.isfile(os.path.join(self._directory, p) + INDEX_SUFFIX)]
        self._latest = latest_checkpoint(self._directory) if latest is not None else None

    directory = read_only("_directory", "The folder the checkpoints are written to.")
    checkpoint = read_only("_checkpoint", "The `Checkpoint` this manager saves.")
    latest_checkpoint = read_only("_latest", "The newest checkpoint's prefix, or None.")

    @property
    def checkpoints(self):
        """The prefixes kept, oldest first."""
        return list(self._checkpoints)

    checkpoint_interval = read_only("_interval", "The least steps between two saves (None: any).")

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes a new checkpoint, names it in the state file, and deletes the oldest
        beyond `max_to_keep`.

        Args:
            checkpoint_number: the number in the prefix (default: the step counter's value
                if one was given, else the checkpoint's save counter).
            check_interval: honour `checkpoint_interval` (False: save regardless).

        Returns:
            The prefix written, or None when the interval has not passed.
        """
        step = None
        if self._step_counter is not None:
            step = int(np.asarray(self._step_counter.numpy() if hasattr(
                self._step_counter, "numpy") else self._step_counter))
        if self._interval is not None and check_interval and self._last_step is not None \
                and step - self._last_step < self._interval:
            return None
        counter = self._checkpoint.save_counter
        with eager_scope():
            counter.assign_add(1)
        if checkpoint_number is None:
            checkpoint_number = step if step is not None else int(counter.numpy())
        prefix = f"{self._prefix}-{int(checkpoint_number)}"
        os.makedirs(self._directory, exist_ok=True)
        self._checkpoint.write(prefix)
        self._checkpoints = [p for p in self._checkpoints if p != prefix] + [prefix]
        self._latest = prefix
        self._last_step = step
        removed = []
        if self._max_to_keep is not None:
            while len(self._checkpoints) > self._max_to_keep:
                oldest = self._checkpoints.pop(0)
                if self._keep_hours is not None and \
                        time.time() - self._last_preserved > self._keep_hours * 3600:
                    self._last_preserved = time.time()
                    continue
                removed.append(oldest)
        _write_state(self._directory, prefix, self._checkpoints)   # the commit point
        for old in removed:
            _delete(old)
        return prefix

    def restore_or_initialize(self):
        """Restores the latest checkpoint if there is one (returning its prefix), else calls
        `init_fn` and returns None."""
        if self._latest is not None:
            self._checkpoint.restore(self._latest)
            return self._latest
        if self._init_fn is not None:
            self._init_fn()
        return None


# ------------------------------------------------------------------ Model.save_weights

def save_weights_checkpoint(model, prefix):
    """Writes `model`'s Variables as a checkpoint with the model as its root (the form of
    tf.keras 2's `save_weights` without an extension)."""
    _write(prefix, _variables_by_path(model))


def load_weights_checkpoint(model, prefix):
    """Restores what `save_weights_checkpoint` wrote into `model`; returns the status."""
    return CheckpointLoadStatus(model, _read(prefix), os.fspath(prefix))
