"""Helpers shared by the optimizers: flat parameter vectors and input nests.

Second-order optimizers (conjugate gradient, line search) work on one flat vector holding every
optimized variable; these helpers convert between that vector and the list of variables.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import tensorflow as tf


def flatten_tensors(tensors: Sequence[tf.Tensor | tf.Variable]) -> tf.Tensor:
    """Concatenate tensors into one flat vector.

    Args:
        tensors: tensors of any shapes and one common dtype.

    Returns:
        ``[sum of sizes]`` tensor: the row-major (C order) entries of each tensor, in order.
    """
    return tf.concat([tf.reshape(t, [-1]) for t in tensors], axis=0)


def unflatten_tensors(flat: tf.Tensor, shapes: Sequence[tf.TensorShape]) -> list[tf.Tensor]:
    """Split a flat vector into tensors of the given shapes (inverse of :func:`flatten_tensors`).

    Args:
        flat: ``[sum of sizes]`` vector.
        shapes: fully defined shapes, one per output tensor.

    Returns:
        Tensors of the requested ``shapes``.
    """
    sizes = [int(tf.TensorShape(s).num_elements()) for s in shapes]
    parts = tf.split(flat, sizes, axis=0)
    return [tf.reshape(p, s) for p, s in zip(parts, shapes)]


def check_variables(variables: Sequence[tf.Variable]) -> list[tf.Variable]:
    """Validate the variables an optimizer is built on.

    Args:
        variables: non-empty sequence of ``tf.Variable`` with fully defined shapes and one common
            floating point dtype.

    Returns:
        The variables as a list.

    Raises:
        ValueError: if ``variables`` is empty, holds a non-variable, has undefined shapes or
            mixes dtypes.
    """
    variables = list(variables)
    if not variables:
        raise ValueError("variables is empty; pass the list of tf.Variable to optimize")
    for v in variables:
        if not isinstance(v, tf.Variable):
            raise ValueError(f"expected tf.Variable objects, got {type(v).__name__}")
        if not v.shape.is_fully_defined():
            raise ValueError(f"variable {v.name} has undefined shape {v.shape}")
    dtypes = {v.dtype for v in variables}
    if len(dtypes) != 1 or not variables[0].dtype.is_floating:
        raise ValueError(
            f"variables must share one floating point dtype, got {sorted(d.name for d in dtypes)}"
        )
    return variables


def to_tensor_nest(inputs: Any) -> Any:
    """Convert every leaf of a nest (tuple, list, dict, NamedTuple) to a tensor, keeping ``None``.

    Converting numpy arrays up front makes ``tf.function`` see tensors, so calls with equal shapes
    and dtypes reuse one trace.

    Args:
        inputs: a nest of array-likes or ``None`` leaves.

    Returns:
        The same nest with ``tf.Tensor`` leaves.
    """
    return tf.nest.map_structure(lambda x: x if x is None else tf.convert_to_tensor(x), inputs)


def leading_dim(inputs: Any) -> int:
    """Return the common leading (task) dimension of every leaf of a nest of tensors.

    Args:
        inputs: a nest of tensors of rank >= 1 (``None`` leaves are ignored).

    Returns:
        The size of the leading axis.

    Raises:
        ValueError: if the nest has no tensor, a leaf is a scalar, or the leading sizes differ.
    """
    leaves = [x for x in tf.nest.flatten(inputs) if x is not None]
    if not leaves:
        raise ValueError("inputs contain no tensor; expected a nest of [T, ...] tensors")
    sizes = set()
    for x in leaves:
        if x.shape.rank is None or x.shape.rank == 0:
            raise ValueError(f"every input needs a leading task axis, got shape {x.shape}")
        sizes.add(int(x.shape[0]))
    if len(sizes) != 1:
        raise ValueError(f"inputs disagree on the leading task axis: sizes {sorted(sizes)}")
    return sizes.pop()
