"""The shapes array constructors and random draws provably make, for the static scan's evaluator (shapes.Evaluator,
passed as `ev`: it evaluates their arguments): numpy / jax.numpy's zeros, ones, full, arange, linspace, eye, ...,
jax.random's and numpy's random draws, meshgrid's outputs. None where a shape cannot be proved.
"""

from __future__ import annotations

import ast
import math

from jaxci.audit.reading.sizes import Known, join

NUMPY_MODULES = ("numpy", "jax.numpy")
CONSTRUCTORS = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "geomspace", "eye", "identity"}
RANDOM_SIZE_METHODS = {"normal", "uniform", "standard_normal", "random", "integers", "choice", "exponential",
                       "randn", "rand", "randint", "multivariate_normal", "gamma", "beta", "poisson", "binomial"}
KEY_MAKERS = {"jax.random.PRNGKey", "jax.random.key"}
#: jax.random samplers -> position of their `shape` argument (after the key and the distribution's own)
RANDOM_SHAPE_ARG = {**dict.fromkeys(("normal", "uniform", "randint", "exponential", "laplace", "logistic",
                                     "cauchy", "gumbel", "rademacher", "bits", "truncated_normal_std"), 1),
                    **dict.fromkeys(("choice", "bernoulli", "gamma", "poisson", "t", "dirichlet",
                                     "chisquare", "loggamma", "pareto", "weibull_min"), 2),
                    **dict.fromkeys(("beta", "categorical", "multivariate_normal", "truncated_normal"), 3)}


def constructed(ev, node: ast.Call):
    """(label, shape) of an array constructor or random draw with a provable shape, else None."""
    name = ev._name(node.func)
    short = name.rsplit(".", 1)[-1]
    kw = {k.arg: k.value for k in node.keywords if k.arg}
    module = name.rsplit(".", 1)[0] if "." in name else ""
    if name in KEY_MAKERS:
        return name, Known((2,))
    if module in NUMPY_MODULES and short in ("array", "asarray") and node.args \
            and isinstance(node.args[0], (ast.List, ast.Tuple)):
        return None  # literal data: tiny, not worth a size line
    if module in NUMPY_MODULES and short in CONSTRUCTORS:
        shape = numpy_constructed(ev, short, node, kw)
    else:
        shape = shape_arg(ev, random_shape_node(name, short, node, kw))
    if shape is None:
        return None
    return (short if module in NUMPY_MODULES else name.replace("jax.random.", "random.")), shape

def numpy_constructed(ev, short: str, node: ast.Call, kw: dict) -> Known | None:
    """The shape numpy / jax.numpy's zeros, ones, full, arange, linspace, eye, ... make."""
    if short in ("linspace", "logspace", "geomspace"):
        num = kw.get("num") or (node.args[2] if len(node.args) > 2 else None)
        return Known((50,), ("numpy default num=50",)) if num is None else shape_arg(ev, num)
    if short == "arange":
        args = [ev._eval_k(a) for a in node.args]
        if not args or not all(a is not None and isinstance(a.value, (int, float)) for a in args):
            return None
        vals = [a.value for a in args]
        length = math.ceil((vals[1] - vals[0]) / (vals[2] if len(vals) > 2 else 1)) if len(vals) > 1 \
            else math.ceil(vals[0])
        return Known((max(int(length), 0),), join(*args))
    if short in ("eye", "identity"):
        n = ev._eval_k(node.args[0]) if node.args else None
        return Known((n.value, n.value), n.why) if n and isinstance(n.value, int) else None
    return shape_arg(ev, kw.get("shape") or (node.args[0] if node.args else None))

def shape_arg(ev, shape_node) -> Known | None:
    """A `shape` / `size` argument as a shape: an integer or a tuple of non-negative integers."""
    value = ev._eval_k(shape_node)
    if value is None or isinstance(value.value, float):
        return None
    shape = value.value if isinstance(value.value, tuple) else (value.value,)
    if not shape or not all(isinstance(v, int) and v >= 0 for v in shape):
        return None
    return Known(shape, value.why)

def meshgrid(ev, node: ast.Call) -> Known | None:
    """Shape of each output of meshgrid(a, b, ...): the product of the inputs' lengths."""
    if not ev._name(node.func).endswith("meshgrid") or not node.args:
        return None
    shapes = [ev._shape_k(a) for a in node.args]
    if not all(s is not None and s.elements is not None for s in shapes):
        return None
    dims = tuple(s.elements for s in shapes)
    ij = any(k.arg == "indexing" and isinstance(k.value, ast.Constant) and k.value.value == "ij"
             for k in node.keywords)
    if len(dims) >= 2 and not ij:
        dims = (dims[1], dims[0], *dims[2:])
    return Known(dims, join(*shapes))


def random_shape_node(name: str, short: str, node: ast.Call, kw: dict):
    """The shape argument of a random draw: jax.random's `shape` (by position or keyword), numpy's `size`,
    randn / rand's dimensions; None when there is none (jax.random.split makes keys, not data)."""
    if name.startswith("jax.random.") and short in RANDOM_SHAPE_ARG:
        at = RANDOM_SHAPE_ARG[short]
        return kw.get("shape") or (node.args[at] if len(node.args) > at else None)
    if short in RANDOM_SIZE_METHODS and ("random" in name or "rng" in name.lower() or "size" in kw):
        if "size" in kw:
            return kw["size"]
        if short in ("randn", "rand"):
            return ast.Tuple(elts=list(node.args), ctx=ast.Load())
    return None
