"""Adadelta, Adamax, Nadam, Ftrl, Lion, Lamb, Adafactor, Muon, ScheduleFreeAdamW: each only
`build` (slots) and `update_step`, with Keras 3.15's math, defaults, config keys and
variables (names, order, shapes), so an optimizer state saved by Keras loads here.

Owns: these update formulas. Elementwise ones (Adadelta, Adamax, Nadam, Ftrl, Lion,
ScheduleFreeAdamW) say so (`elementwise_update`) and run over flat buffers like Adam;
Lamb (a per-variable norm ratio), Adafactor (factored second moments) and Muon
(Newton-Schulz orthogonalization of each matrix) need each variable's shape and stay
per variable.
Invariants: Nadam's momentum-cache product is one float32 Variable, last among the
variables, updated once per update before the update steps (`_prepare_update_steps`),
shared by the flat and the per-variable state; ScheduleFreeAdamW's `momentum` slots
start as copies of the variables, once (never again when the flat state is built).
"""
import re

from .. import initializers
from ..graph.context import eager_scope
from ..graph.dtypes import float32, int32
from ..graph.ops.array import constant, expand_dims, transpose
from ..graph.ops.math import (abs, cast, clip_by_value, greater, matmul, maximum,  # noqa: A004
                              minimum, pow, reduce_mean, reduce_sum, sign, sqrt,  # noqa: A004
                              square, where)

from .base import Optimizer, _decay

__all__ = ["Adadelta", "Adamax", "Nadam", "Ftrl", "Lion", "Lamb", "Adafactor", "Muon",
           "ScheduleFreeAdamW"]


def _step(optimizer, dtype, offset=1):
    """`iterations + offset` as a float of `dtype` (the step being taken is offset 1)."""
    return cast(optimizer.iterations + offset, dtype)


class _Moments(Optimizer):
    """The arguments Adamax, Nadam and Lamb share: `beta_1` (0.9), `beta_2` (0.999) and
    `epsilon` (1e-7), kept and reported in the config as Keras 3 does."""

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon}


class Adadelta(Optimizer):
    """Adadelta (Zeiler, 2012), in Keras 3's form.

    `acc_g = rho * acc_g + (1 - rho) * g^2;
    delta = -sqrt(acc_d + eps) * g / sqrt(acc_g + eps);
    acc_d = rho * acc_d + (1 - rho) * delta^2; var += lr * delta`.

    Args:
        learning_rate: default 0.001 (1.0 is the paper's form).
        rho: the decay rate, default 0.95.
        epsilon: default 1e-7.

    Example:
        >>> opt = tl.optim.Adadelta(learning_rate=1.0)
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho, self.epsilon = rho, epsilon

    def build(self, var_list):
        super().build(var_list)
        self._accumulated_grads, self._accumulated_delta_vars = self.add_optimizer_variables(
            var_list, ["accumulated_grad", "accumulated_delta_var"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        rho = self.rho
        acc_grad, acc_delta = self._accumulated_grads[i], self._accumulated_delta_vars[i]
        acc_grad.assign(rho * acc_grad + (1 - rho) * square(gradient))
        delta = -(sqrt(acc_delta + self.epsilon) * gradient / sqrt(acc_grad + self.epsilon))
        acc_delta.assign(rho * acc_delta + (1 - rho) * square(delta))
        variable.assign_add(learning_rate * delta)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "epsilon": self.epsilon}


class Adamax(_Moments):
    """Adamax: Adam with the infinity norm, in Keras 3's form.

    `m += (g - m) * (1 - beta_1); u = max(beta_2 * u, |g|);
    var -= lr * m / ((1 - beta_1^t) * (u + epsilon))`.

    Args:
        learning_rate: default 0.001.
        beta_1, beta_2: default 0.9, 0.999.
        epsilon: default 1e-7.

    Example:
        >>> opt = tl.optim.Adamax(learning_rate=0.002)
    """

    elementwise_update = True

    def build(self, var_list):
        super().build(var_list)
        self._m, self._u = self.add_optimizer_variables(var_list, ["momentum", "norm"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        beta_1_power = pow(constant(self.beta_1, dtype=dtype), _step(self, dtype))
        m, u = self._m[i], self._u[i]
        m.assign_add((gradient - m) * (1 - self.beta_1))
        u.assign(maximum(self.beta_2 * u, abs(gradient)))
        variable.assign_sub(learning_rate * m / ((1 - beta_1_power) * (u + self.epsilon)))


class Nadam(_Moments):
    """Nadam: Adam with Nesterov momentum (Dozat, 2015), in Keras 3's form, with the
    momentum schedule `u_t = beta_1 * (1 - 0.5 * 0.96^t)` and its running product.

    Args:
        learning_rate: default 0.001.
        beta_1, beta_2: default 0.9, 0.999.
        epsilon: default 1e-7.

    Example:
        >>> opt = tl.optim.Nadam(learning_rate=0.002)
    """

    elementwise_update = True

    def build(self, var_list):
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"])
        if self._flat_building is None:   # one product, shared with the flat state
            dtype = var_list[0].dtype if var_list else float32
            self._u_product = self._attribute_variable(1.0, dtype, "variable")

    def _prepare_update_steps(self):
        dtype = self._u_product.dtype
        decay = pow(constant(0.96, dtype=dtype), _step(self, dtype))
        self._u_product.assign(self._u_product * self.beta_1 * (1.0 - 0.5 * decay))

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        decay = constant(0.96, dtype=dtype)
        beta_1, beta_2 = constant(self.beta_1, dtype=dtype), constant(self.beta_2, dtype=dtype)
        u_t = beta_1 * (1.0 - 0.5 * pow(decay, _step(self, dtype)))
        u_t_1 = beta_1 * (1.0 - 0.5 * pow(decay, _step(self, dtype, 2)))
        u_product_t = self._u_product.read_value()
        if u_product_t.dtype is not dtype:
            u_product_t = cast(u_product_t, dtype)
        u_product_t_1 = u_product_t * u_t_1
        beta_2_power = pow(beta_2, _step(self, dtype))
        m, v = self._momentums[i], self._velocities[i]
        m.assign_add((gradient - m) * (1 - beta_1))
        v.assign_add((square(gradient) - v) * (1 - beta_2))
        m_hat = u_t_1 * m / (1 - u_product_t_1) + (1 - u_t) * gradient / (1 - u_product_t)
        v_hat = v / (1 - beta_2_power)
        variable.assign_sub(m_hat * learning_rate / (sqrt(v_hat) + self.epsilon))


class Ftrl(Optimizer):
    """FTRL-Proximal (McMahan et al., 2013), in Keras 3's form, with online L1/L2 and
    shrinkage-type L2 regularization.

    `n' = n + g^2; z += g + 2 * l2_shrinkage * w - (n'^-p - n^-p) / lr * w;
    w = (clip(z, -l1, l1) - z) / (n'^-p / lr + 2 * (l2 + beta / (2 lr))); n = n'`
    with `p = learning_rate_power`.

    Args:
        learning_rate: default 0.001.
        learning_rate_power: <= 0, default -0.5.
        initial_accumulator_value: >= 0, default 0.1.
        l1_regularization_strength, l2_regularization_strength,
        l2_shrinkage_regularization_strength: >= 0, default 0.
        beta: default 0.

    Raises:
        ValueError: for a value outside those ranges.

    Example:
        >>> opt = tl.optim.Ftrl(learning_rate=0.1, l1_regularization_strength=0.01)
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, l2_shrinkage_regularization_strength=0.0,
                 beta=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        for arg, value, sign_word in (
                ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
                ("learning_rate_power", -learning_rate_power, "negative or zero"),
                ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
                ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 "positive or zero")):
            if value < 0.0:
                shown = -value if arg == "learning_rate_power" else value
                raise ValueError(f"`{arg}` needs to be {sign_word}. Received: {arg}={shown}.")
        self.learning_rate_power = learning_rate_power
        self.initial_accumulator_value = initial_accumulator_value
        self.l1_regularization_strength = l1_regularization_strength
        self.l2_regularization_strength = l2_regularization_strength
        self.l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength
        self.beta = beta

    def build(self, var_list):
        super().build(var_list)
        self._accumulators, self._linears = self.add_optimizer_variables(
            var_list, ["accumulator", "linear"],
            initializer=[initializers.Constant(self.initial_accumulator_value), "zeros"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        lr = learning_rate
        accum, linear = self._accumulators[i], self._linears[i]
        power = -self.learning_rate_power
        l2_reg = self.l2_regularization_strength + self.beta / (2.0 * lr)
        grad_to_use = gradient + 2 * self.l2_shrinkage_regularization_strength * variable
        new_accum = accum + square(gradient)
        linear.assign_add(grad_to_use - (pow(new_accum, power) - pow(accum, power)) / lr * variable)
        quadratic = pow(new_accum, power) / lr + 2 * l2_reg
        l1 = self.l1_regularization_strength
        variable.assign((clip_by_value(linear, -l1, l1) - linear) / quadratic)
        accum.assign(new_accum)

    def get_config(self):
        return {**super().get_config(),
                "learning_rate_power": self.learning_rate_power,
                "initial_accumulator_value": self.initial_accumulator_value,
                "l1_regularization_strength": self.l1_regularization_strength,
                "l2_regularization_strength": self.l2_regularization_strength,
                "l2_shrinkage_regularization_strength":
                    self.l2_shrinkage_regularization_strength,
                "beta": self.beta}


class Lion(Optimizer):
    """Lion (Chen et al., 2023): `var -= lr * sign(beta_1 * m + (1 - beta_1) * g);
    m = beta_2 * m + (1 - beta_2) * g`.

    Args:
        learning_rate: default 0.001.
        beta_1: in (0, 1], default 0.9.
        beta_2: default 0.99.

    Raises:
        ValueError: for beta_1 outside (0, 1].

    Example:
        >>> opt = tl.optim.Lion(learning_rate=1e-4, weight_decay=0.1)
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.99, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2 = beta_1, beta_2
        if beta_1 <= 0 or beta_1 > 1:
            raise ValueError("Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                             f"optimizer degenerates to SignSGD. Received: beta_1={beta_1}.")

    def build(self, var_list):
        super().build(var_list)
        self._momentums = self.add_optimizer_variables(var_list, "momentum")

    def update_step(self, gradient, variable, learning_rate):
        dtype = variable.dtype
        beta_1, beta_2 = constant(self.beta_1, dtype=dtype), constant(self.beta_2, dtype=dtype)
        m = self._momentums[self._var_index(variable)]
        variable.assign_sub(learning_rate * sign(m * beta_1 + gradient * (1.0 - beta_1)))
        m.assign(m * beta_2 + gradient * (1.0 - beta_2))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2}


class Lamb(_Moments):
    """LAMB (You et al.): Adam's bias-corrected step scaled per variable by the trust
    ratio `||w|| / ||step||` (1 where either norm is 0), in Keras 3's form.

    Not elementwise (each variable's own norms), so it always updates variable by variable.

    Args:
        learning_rate: default 0.001.
        beta_1, beta_2: default 0.9, 0.999.
        epsilon: default 1e-7.

    Example:
        >>> opt = tl.optim.Lamb(learning_rate=0.01)
    """

    def build(self, var_list):
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"])

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        step = _step(self, dtype)
        beta_1_power = pow(constant(self.beta_1, dtype=dtype), step)
        beta_2_power = pow(constant(self.beta_2, dtype=dtype), step)
        m, v = self._momentums[i], self._velocities[i]
        m.assign_add((gradient - m) * (1 - self.beta_1))
        v.assign_add((square(gradient) - v) * (1 - self.beta_2))
        update = (m / (1.0 - beta_1_power)) / (sqrt(v / (1.0 - beta_2_power)) + self.epsilon)
        w_norm = sqrt(reduce_sum(square(variable)))
        g_norm = sqrt(reduce_sum(square(update)))
        one = constant(1.0, dtype=dtype)
        ratio = where(greater(w_norm, 0), where(greater(g_norm, 0), w_norm / g_norm, one), one)
        variable.assign_sub(ratio * learning_rate * update)


def _rms(x):
    return sqrt(reduce_mean(square(x)))


class Adafactor(Optimizer):
    """Adafactor (Shazeer & Stern, 2018), in Keras 3's form: second moments of a variable
    of rank >= 2 factored over its last two dimensions (a row slot `r` and a column slot
    `c`), updates clipped by their RMS, step size relative to the variable's RMS.

    Variables, as Keras: per variable `r`, `c` (named like the variable; int32 scalar
    placeholders below rank 2), then `velocity`. Not elementwise: per variable always.

    Args:
        learning_rate: default 0.001.
        beta_2_decay: default -0.8 (`beta_2_t = 1 - t^beta_2_decay`).
        epsilon_1: added to squared gradients, default 1e-30.
        epsilon_2: the floor of the variable's RMS, default 1e-3.
        clip_threshold: default 1.0.
        relative_step: cap a constant learning rate at `1 / sqrt(t)` (default True).

    Example:
        >>> opt = tl.optim.Adafactor(learning_rate=0.01)
    """

    def __init__(self, learning_rate=0.001, beta_2_decay=-0.8, epsilon_1=1e-30, epsilon_2=1e-3,
                 clip_threshold=1.0, relative_step=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_2_decay, self.epsilon_1, self.epsilon_2 = beta_2_decay, epsilon_1, epsilon_2
        self.clip_threshold, self.relative_step = clip_threshold, relative_step

    def build(self, var_list):
        super().build(var_list)
        self._r, self._c, self._v = [], [], []
        for var in var_list:
            name = var.name.split(":")[0]
            shape = tuple(var.shape)
            if len(shape) < 2:   # placeholders, as Keras's (attribute-tracked) ones
                self._r.append(self._attribute_variable(0, int32, name))
                self._c.append(self._attribute_variable(0, int32, name))
            else:
                self._r.append(self.add_variable(shape[:-1], dtype=var.dtype, name=name))
                self._c.append(self.add_variable(shape[:-2] + shape[-1:], dtype=var.dtype,
                                                 name=name))
            self._v.append(self.add_variable_from_reference(var, "velocity"))

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        lr = learning_rate
        step = _step(self, dtype)
        if self._schedule is None and self.relative_step:
            lr = minimum(lr, 1 / sqrt(step))
        r, c, v = self._r[i], self._c[i], self._v[i]
        rho_t = minimum(lr, 1 / sqrt(step))
        alpha_t = maximum(constant(self.epsilon_2, dtype=dtype), _rms(variable)) * rho_t
        regulated_grad_square = square(gradient) + self.epsilon_1
        beta_2_t = 1 - pow(step, self.beta_2_decay)
        if len(variable.shape) >= 2:
            r.assign(beta_2_t * r + (1 - beta_2_t) * reduce_mean(regulated_grad_square, axis=-1))
            c.assign(beta_2_t * c + (1 - beta_2_t) * reduce_mean(regulated_grad_square, axis=-2))
            v.assign(expand_dims(r / reduce_mean(r, axis=-1, keepdims=True), -1) *
                     expand_dims(c, -2))
        else:
            v.assign(beta_2_t * v + (1 - beta_2_t) * regulated_grad_square)
        u_t = gradient / sqrt(v)
        u_t_hat = u_t / maximum(constant(1.0, dtype=dtype), _rms(u_t) / self.clip_threshold)
        variable.assign_sub(alpha_t * u_t_hat)

    def get_config(self):
        return {**super().get_config(), "beta_2_decay": self.beta_2_decay,
                "epsilon_1": self.epsilon_1, "epsilon_2": self.epsilon_2,
                "clip_threshold": self.clip_threshold, "relative_step": self.relative_step}


class Muon(Optimizer):
    """Muon, in Keras 3's form: momentum on each 2-D variable, orthogonalized by quintic
    Newton-Schulz iterations and scaled by `sqrt(max(rows, cols)) * rms_rate`; every other
    variable (not 2-D, an embedding when `exclude_embeddings`, or a path matching one of
    `exclude_layers`) is trained by AdamW (learning rate times `adam_lr_ratio`, weight
    decay `adam_weight_decay`).

    Variables, as Keras: per variable `momentum`, then `velocity` for the AdamW ones.
    Not elementwise: per variable always.

    Args:
        learning_rate: default 0.001.
        adam_beta_1, adam_beta_2: default 0.9, 0.999.
        adam_weight_decay: default 0.004. epsilon: default 1e-7.
        weight_decay: for the Muon variables, default 0.004.
        exclude_layers: regular expressions of variable paths trained by AdamW.
        exclude_embeddings: default True.
        muon_a, muon_b, muon_c: the Newton-Schulz coefficients (3.4445, -4.7750, 2.0315).
        adam_lr_ratio: default 1. momentum: default 0.95. ns_steps: default 5.
        nesterov: default True. rms_rate: default 0.2 (None: no rescaling).

    Example:
        >>> opt = tl.optim.Muon(learning_rate=0.02)
    """

    def __init__(self, learning_rate=0.001, adam_beta_1=0.9, adam_beta_2=0.999,
                 adam_weight_decay=0.004, epsilon=1e-7, weight_decay=0.004,
                 exclude_layers=None, exclude_embeddings=True, muon_a=3.4445, muon_b=-4.7750,
                 muon_c=2.0315, adam_lr_ratio=1, momentum=0.95, ns_steps=5, nesterov=True,
                 rms_rate=0.2, **kwargs):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, **kwargs)
        self.adam_beta_1, self.adam_beta_2, self.epsilon = adam_beta_1, adam_beta_2, epsilon
        self.muon_a, self.muon_b, self.muon_c = muon_a, muon_b, muon_c
        self.adam_lr_ratio, self.momentum, self.ns_steps = adam_lr_ratio, momentum, ns_steps
        self.nesterov, self.exclude_embeddings = nesterov, exclude_embeddings
        self.exclude_layers = exclude_layers or []
        self.adam_weight_decay, self.rms_rate = adam_weight_decay, rms_rate

    def _should_use_adamw(self, variable):
        if len(variable.shape) != 2:
            return True
        path = getattr(variable, "path", None) or variable.name
        if self.exclude_embeddings and "embedding" in path.lower():
            return True
        return any(re.search(keyword, path) for keyword in self.exclude_layers)

    def build(self, var_list):
        super().build(var_list)
        self.momentums, self.adam_velocities = [], []
        for var in var_list:
            self.momentums.append(self.add_variable_from_reference(var, "momentum"))
            self.adam_velocities.append(self.add_variable_from_reference(var, "velocity")
                                        if self._should_use_adamw(var) else None)

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        m, v = self.momentums[i], self.adam_velocities[i]
        if v is not None:
            self._adamw_update_step(gradient, variable, learning_rate * self.adam_lr_ratio, m, v)
        else:
            self._muon_update_step(gradient, variable, learning_rate, m)

    def _muon_update_step(self, gradient, variable, lr, m):
        m.assign_add(gradient + m * (self.momentum - 1))
        g = gradient + self.momentum * m if self.nesterov else m.read_value()
        update = self.zeropower_via_newtonschulz5(g, self.ns_steps)
        variable.assign_sub(self.lr_adjust(lr * update))

    def _adamw_update_step(self, gradient, variable, lr, m, v):
        dtype = variable.dtype
        step = _step(self, dtype)
        beta_1_power = pow(constant(self.adam_beta_1, dtype=dtype), step)
        beta_2_power = pow(constant(self.adam_beta_2, dtype=dtype), step)
        alpha = lr * sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m.assign_add((gradient - m) * (1 - self.adam_beta_1))
        v.assign_add((square(gradient) - v) * (1 - self.adam_beta_2))
        variable.assign_sub(m * alpha / (sqrt(v) + self.epsilon))

    def lr_adjust(self, x):
        """`x * sqrt(max(rows, cols)) * rms_rate` (Moonlight's scaling), or `x` when
        `rms_rate` is None."""
        if self.rms_rate is None:
            return x
        rows, cols = x.shape[0], x.shape[1]
        return x * sqrt(constant(float(max(rows, cols)), dtype=x.dtype)) * self.rms_rate

    def zeropower_via_newtonschulz5(self, x, steps):
        """The quintic Newton-Schulz iteration towards the orthogonal factor of `x` (2-D)."""
        if len(x.shape) < 2:
            raise ValueError("Expected gradient or momentum to have at least 2 dimensions. "
                             f"Received: shape={tuple(x.shape)}")
        a, b, c = self.muon_a, self.muon_b, self.muon_c
        tall = x.shape[-2] > x.shape[-1]
        if tall:
            x = transpose(x)
        x = x / (sqrt(reduce_sum(square(x), axis=[-2, -1], keepdims=True)) + 1e-7)
        for _ in range(steps):
            temp_a = matmul(x, transpose(x))
            temp_b = b * temp_a + matmul(c * temp_a, temp_a)
            x = a * x + matmul(temp_b, x)
        return transpose(x) if tall else x

    def _apply_weight_decay(self, variables, lr, flat_groups=()):
        """Keras 3's Muon: `adam_weight_decay` for the AdamW variables, `weight_decay` for
        the Muon ones (never flat: Muon is not elementwise)."""
        for variable in variables:
            if getattr(variable, "_exclude_from_weight_decay", False):
                continue
            decay = self.adam_weight_decay if self._should_use_adamw(variable) \
                else self.weight_decay
            if decay is not None:
                _decay(variable, decay, lr)

    def get_config(self):
        return {**super().get_config(), "adam_beta_1": self.adam_beta_1,
                "adam_beta_2": self.adam_beta_2, "epsilon": self.epsilon,
                "exclude_layers": self.exclude_layers, "muon_a": self.muon_a,
                "muon_b": self.muon_b, "muon_c": self.muon_c,
                "adam_lr_ratio": self.adam_lr_ratio, "momentum": self.momentum,
                "ns_steps": self.ns_steps, "nesterov": self.nesterov,
                "exclude_embeddings": self.exclude_embeddings,
                "adam_weight_decay": self.adam_weight_decay, "rms_rate": self.rms_rate}


class ScheduleFreeAdamW(Optimizer):
    """Schedule-free AdamW (Defazio et al., 2024), in Keras 3's form: the `momentum` slot
    holds the base sequence z (starting at the variable's value), the variable the
    interpolation y, the average x recovered from both.

    `v += (g^2 - v) * (1 - beta_2); z -= lr * g / (sqrt(v / (1 - beta_2^t)) + eps);
    x = (y - (1 - beta_1) * z_old) / beta_1; x = (1 - 1/t) * x + z / t;
    y = (1 - beta_1) * z + beta_1 * x`, with lr warmed up linearly over `warmup_steps`.

    Args:
        learning_rate: default 0.0025.
        beta_1, beta_2: default 0.9, 0.999.
        epsilon: default 1e-8.
        warmup_steps: default 0.

    Example:
        >>> opt = tl.optim.ScheduleFreeAdamW(learning_rate=0.0025, warmup_steps=100)
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.0025, beta_1=0.9, beta_2=0.999, epsilon=1e-8,
                 warmup_steps=0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon = beta_1, beta_2, epsilon
        self.warmup_steps = warmup_steps

    def build(self, var_list):
        super().build(var_list)
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"])
        if self._flat_building is None:   # the flat slots gather these values as they are
            with eager_scope():   # once, now, even when the build runs in a first trace
                for momentum, var in zip(self._momentums, var_list):
                    momentum.assign(var.numpy())

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        lr = learning_rate
        step = _step(self, dtype)
        beta_1, beta_2 = constant(self.beta_1, dtype=dtype), constant(self.beta_2, dtype=dtype)
        if self.warmup_steps > 0:
            lr = lr * minimum(step / constant(float(self.warmup_steps), dtype=dtype), 1.0)
        momentum, velocity = self._momentums[i], self._velocities[i]
        momentum_old = momentum.read_value()
        bias_correction_2 = 1 - pow(beta_2, step)
        velocity.assign_add((square(gradient) - velocity) * (1 - beta_2))
        denom = sqrt(velocity / bias_correction_2) + constant(self.epsilon, dtype=dtype)
        momentum.assign_sub(lr * gradient / denom)
        weight = 1.0 / step
        x_old = (variable - (1 - beta_1) * momentum_old) / beta_1
        x_new = (1 - weight) * x_old + weight * momentum
        variable.assign((1 - beta_1) * momentum + beta_1 * x_new)

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "warmup_steps": self.warmup_steps}
