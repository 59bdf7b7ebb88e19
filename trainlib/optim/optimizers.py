"""SGD, Adam, AdamW, RMSprop, Adagrad: each only `build` (slots) and `update_step` (Keras 3's math).

Owns: the update formulas, with Keras 3's defaults and epsilon placement
(epsilon 1e-7 outside the square root in Adam and RMSprop's denominator
form, inside it for Adagrad), so results match Keras to float precision.
"""
from .. import initializers
from ..graph.ops.array import constant
from ..graph.ops.math import cast, maximum, pow, sqrt, square  # noqa: A004

from .base import Optimizer

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]


class SGD(Optimizer):
    """Gradient descent, with optional (Nesterov) momentum.

    `m = momentum * m - lr * g; var += m` (Nesterov: `var += momentum * m - lr * g`);
    without momentum `var -= lr * g`.

    Args:
        learning_rate: default 0.01.
        momentum: default 0.0.
        nesterov: use Nesterov momentum.
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if not 0 <= momentum <= 1:
            raise ValueError(f"momentum must be in [0, 1], got {momentum}")
        self.momentum, self.nesterov = float(momentum), bool(nesterov)

    def build(self, var_list):
        super().build(var_list)
        self.momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list] \
            if self.momentum != 0 else []

    def update_step(self, gradient, variable, learning_rate):
        if not self.momentums:
            variable.assign_sub(gradient * learning_rate)
            return
        m = self.momentums[self._var_index(variable)]
        m.assign(m * self.momentum - gradient * learning_rate)
        if self.nesterov:
            variable.assign_add(m * self.momentum - gradient * learning_rate)
        else:
            variable.assign_add(m)

    def get_config(self):
        return {**super().get_config(), "momentum": self.momentum, "nesterov": self.nesterov}


class Adam(Optimizer):
    """Adam (Kingma & Ba), in Keras 3's form.

    `m += (g - m) * (1 - beta_1); v += (g^2 - v) * (1 - beta_2);
    alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t); var -= alpha * m / (sqrt(v) + epsilon)`,
    with `v` replaced by its running maximum when `amsgrad`.

    Args:
        learning_rate: default 0.001.
        beta_1, beta_2: default 0.9, 0.999.
        epsilon: default 1e-7.
        amsgrad: use the AMSGrad variant.
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7, amsgrad=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta_1, self.beta_2, self.epsilon, self.amsgrad = beta_1, beta_2, epsilon, amsgrad

    def build(self, var_list):
        super().build(var_list)
        # interleaved per variable (momentum, velocity), as Keras orders `variables`
        self.momentums, self.velocities = [], []
        for v in var_list:
            self.momentums.append(self.add_variable_from_reference(v, "momentum"))
            self.velocities.append(self.add_variable_from_reference(v, "velocity"))
        self.velocity_hats = [self.add_variable_from_reference(v, "velocity_hat")
                              for v in var_list] if self.amsgrad else []

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        dtype = variable.dtype
        step = cast(self.iterations + 1, dtype)
        beta_1_power = pow(constant(self.beta_1, dtype=dtype), step)
        beta_2_power = pow(constant(self.beta_2, dtype=dtype), step)
        m, v = self.momentums[i], self.velocities[i]
        alpha = learning_rate * sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m.assign_add((gradient - m) * (1 - self.beta_1))
        v.assign_add((square(gradient) - v) * (1 - self.beta_2))
        if self.amsgrad:
            v_hat = self.velocity_hats[i]
            v_hat.assign(maximum(v_hat, v))
            v = v_hat
        variable.assign_sub(m * alpha / (sqrt(v) + self.epsilon))

    def get_config(self):
        return {**super().get_config(), "beta_1": self.beta_1, "beta_2": self.beta_2,
                "epsilon": self.epsilon, "amsgrad": self.amsgrad}


class AdamW(Adam):
    """Adam with decoupled weight decay (default 0.004), applied before each update."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, **kwargs):
        if weight_decay is None:
            raise ValueError("AdamW needs a weight_decay value")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, weight_decay=weight_decay, **kwargs)


class RMSprop(Optimizer):
    """RMSprop, in Keras 3's form.

    `v = rho * v + (1 - rho) * g^2`; (centered: `a = rho * a + (1 - rho) * g`,
    denominator `v - a^2 + epsilon`, else `v + epsilon`); `inc = lr * g / sqrt(denominator)`;
    with momentum `mom = momentum * mom + inc; var -= mom`, else `var -= inc`.

    Args:
        learning_rate: default 0.001.
        rho: default 0.9.
        momentum: default 0.0.
        epsilon: default 1e-7.
        centered: normalize by the variance rather than the second moment.
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7, centered=False,
                 **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.rho, self.momentum, self.epsilon, self.centered = rho, momentum, epsilon, centered

    def build(self, var_list):
        super().build(var_list)
        self.velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]
        self.momentums = [self.add_variable_from_reference(v, "momentum") for v in var_list] \
            if self.momentum > 0 else []
        self.average_gradients = [self.add_variable_from_reference(v, "average_gradient")
                                  for v in var_list] if self.centered else []

    def update_step(self, gradient, variable, learning_rate):
        i = self._var_index(variable)
        rho = self.rho
        velocity = self.velocities[i]
        velocity.assign(velocity * rho + square(gradient) * (1 - rho))
        if self.centered:
            average = self.average_gradients[i]
            average.assign(average * rho + gradient * (1 - rho))
            denominator = velocity - square(average) + self.epsilon
        else:
            denominator = velocity + self.epsilon
        increment = learning_rate * gradient / sqrt(denominator)
        if self.momentums:
            momentum = self.momentums[i]
            momentum.assign(momentum * self.momentum + increment)
            variable.assign_sub(momentum)
        else:
            variable.assign_sub(increment)

    def get_config(self):
        return {**super().get_config(), "rho": self.rho, "momentum": self.momentum,
                "epsilon": self.epsilon, "centered": self.centered}


class Adagrad(Optimizer):
    """Adagrad: `acc += g^2; var -= lr * g / sqrt(acc + epsilon)`.

    Args:
        learning_rate: default 0.001.
        initial_accumulator_value: default 0.1.
        epsilon: default 1e-7.
    """

    elementwise_update = True

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.initial_accumulator_value, self.epsilon = initial_accumulator_value, epsilon

    def build(self, var_list):
        super().build(var_list)
        init = initializers.Constant(self.initial_accumulator_value)
        self.accumulators = [self.add_variable_from_reference(v, "accumulator", init)
                             for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        acc = self.accumulators[self._var_index(variable)]
        acc.assign_add(square(gradient))
        variable.assign_sub(learning_rate * gradient / sqrt(acc + self.epsilon))

    def get_config(self):
        return {**super().get_config(),
                "initial_accumulator_value": self.initial_accumulator_value,
                "epsilon": self.epsilon}
