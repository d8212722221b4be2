"""The value and shape evaluator of the static scan: what an expression provably holds, with its evidence.

It knows integers, tuples and float scalars (literals, names bound earlier, function defaults,
NamedTuple / dataclass fields, factory results, arithmetic, int()/len()), array shapes (constructors, random
draws, elementwise jax.numpy calls, arithmetic and `.T` on known arrays, meshgrid), element counts, loop
trip counts and the arrays a loop body closes over. Every value is a `sizes.Known` carrying the steps that
proved it; what cannot be proved is None, never a guess. It records no findings: the visitor
(visitor.py) asks it questions while it walks the cells in order and rebinds names as it meets them.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from jaxci.audit.reading import constructors
from jaxci.audit.reading.sizes import Known, join

JIT = {"jax.jit", "jax.pmap", "equinox.filter_jit"}


#: jax.numpy functions whose result is smaller than their first argument (a size must not pass through them)
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "dot", "vdot", "matmul",
              "inner", "outer", "linalg", "trace", "median", "percentile", "quantile", "any", "all", "count_nonzero",
              "searchsorted", "interp", "diff", "cumsum", "cumprod", "reshape", "ravel", "take", "where"}


def _ordered(node):
    """Nodes in source order (pre-order), so later assignments overwrite earlier ones."""
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _ordered(child)


class _Step:
    """One step of an evidence chain, rendered only when shown (unparsing every binding costs time)."""

    __slots__ = ("cell", "line", "node", "text")

    def __init__(self, cell, line, node, text=None):
        self.cell, self.line, self.node, self.text = cell, line, node, text

    def __str__(self) -> str:
        text = self.text if self.text is not None else _text(self.node)[:70]
        return f"cell {self.cell} line {self.line}: {text}"


class Evaluator:
    """The names in force where the scan stands (cells share one namespace) and what they hold."""

    def __init__(self):
        self.alias: dict[str, str] = {}  # imported name -> dotted module path
        self.consts: dict[str, Known] = {}  # name -> integer / tuple / float scalar
        self.arrays: dict[str, Known] = {}  # name -> shape of the array it holds
        self.defaults: dict[str, list] = {}  # function -> [(param, Known | None)] in order
        self.scopes: list[dict] = []  # the enclosing functions' parameters -> default (None: not known)
        self.fields: dict[str, dict[str, Known | None]] = {}  # NamedTuple / dataclass -> field -> default
        self.instances: dict[str, dict[str, Known]] = {}  # name -> attribute -> value (factory or constructor)
        self.vmapped: dict[str, int] = {}  # name -> vmap depth
        self.funcdefs: dict[str, ast.AST] = {}  # function name -> its def (closed-over arrays of a loop body)
        self.wrapped: dict[str, str] = {}  # name bound to jit/vmap(...) of a function -> that function
        self.cell = 0
        self.line = 0

    def _step(self, node, text: str | None = None) -> _Step:
        return _Step(self.cell, getattr(node, "lineno", 0), node, text)

    def _bind(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._bind_name(target.id, node.value, node)
            elif isinstance(target, (ast.Tuple, ast.List)):
                names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
                values = node.value.elts if isinstance(node.value, (ast.Tuple, ast.List)) else None
                if values is not None and len(values) == len(names):
                    for name, value in zip(names, values):
                        if name:
                            self._bind_name(name, value, node)
                    continue
                grids = constructors.meshgrid(self, node.value) if isinstance(node.value, ast.Call) else None
                if isinstance(node.value, ast.Call) and self._name(node.value.func) == "jax.random.split":
                    grids = Known((2,), ("a PRNG key",))
                for name in names:
                    if name:
                        self.consts.pop(name, None)
                        self.arrays.pop(name, None)
                        if grids is not None:
                            self.arrays[name] = grids.plus(self._step(node))

    def _bind_name(self, name: str, value_node, stmt) -> None:
        if self.scopes and name in self.scopes[-1]:  # rebinding a parameter inside its function
            value = self._eval_k(value_node)
            self.scopes[-1][name] = value.plus(self._step(stmt)) if value is not None else None
            return
        self.consts.pop(name, None)
        self.arrays.pop(name, None)
        self.instances.pop(name, None)
        self.vmapped.pop(name, None)
        value = self._eval_k(value_node)
        if value is not None:
            self.consts[name] = value.plus(self._step(stmt))
            return
        shape = self._shape_k(value_node)
        if shape is not None:
            self.arrays[name] = shape.plus(self._step(stmt))
            return
        if isinstance(value_node, ast.Call):
            attrs = self._instance(value_node)
            if attrs is not None:
                self.instances[name] = {k: v.plus(self._step(stmt)) for k, v in attrs.items()}
            depth = self._vmap_depth(value_node)
            if depth:
                self.vmapped[name] = depth
            base = self._base_function(value_node)
            if base and base != name and isinstance(value_node.func, (ast.Name, ast.Attribute)) \
                    and self._name(value_node.func) in ("jax.vmap", *JIT):
                self.wrapped[name] = base

    def _function_defaults(self, node) -> None:
        args = node.args.posonlyargs + node.args.args
        defaults = [None] * (len(args) - len(node.args.defaults)) + list(node.args.defaults)
        pairs = list(zip(args, defaults)) + list(zip(node.args.kwonlyargs, node.args.kw_defaults))
        params = []
        for arg, default in pairs:
            value = self._eval_k(default) if default is not None else None
            if value is not None:
                value = value.plus(self._step(default, f"default of {node.name}({arg.arg}={_text(default)})"))
            params.append((arg.arg, value))
        self.defaults[node.name] = params

    def _record_fields(self, node: ast.ClassDef) -> None:
        """NamedTuple and dataclass fields with defaults (`n: int = 500`)."""
        bases = {self._name(b) for b in node.bases}
        decorators = {self._name(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
        if not ({"typing.NamedTuple", "NamedTuple"} & bases or any(d.endswith("dataclass") for d in decorators)
                or any("struct" in d for d in decorators)):
            return
        fields: dict[str, Known | None] = {}
        for stmt in node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                value = self._eval_k(stmt.value) if stmt.value is not None else None
                fields[stmt.target.id] = value.plus(self._step(
                    stmt, f"field {node.name}.{stmt.target.id} = {_text(stmt.value)}")) if value else None
        self.fields[node.name] = fields

    def _instance(self, call: ast.Call) -> dict[str, Known] | None:
        """Attributes of `Model(n=...)` or `create_model(...)`: class field defaults, or a factory's parameter
        defaults (factories pass their parameters on to fields of the same name), overridden by the call."""
        if not isinstance(call.func, ast.Name):
            return None
        name = call.func.id
        if name in self.fields:
            params = list(self.fields[name].items())
        elif name in self.defaults:
            params = self.defaults[name]
        else:
            return None
        out = {k: v for k, v in params if v is not None}
        for (param, _), arg in zip(params, call.args):
            value = self._eval_k(arg)
            out.pop(param, None)
            if value is not None:
                out[param] = value.plus(self._step(call, f"{name}(... {param}={_text(arg)} ...)"))
        for kw in call.keywords:
            if kw.arg:
                out.pop(kw.arg, None)
                value = self._eval_k(kw.value)
                if value is not None:
                    out[kw.arg] = value.plus(self._step(call, f"{name}({kw.arg}={_text(kw.value)})"))
        return out

    def _name(self, node) -> str:
        """Dotted name of a Name/Attribute chain with the root resolved through imports ('' if none)."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Call):  # jax.random.PRNGKey(0).something / default_rng().normal
            inner = self._name(node.func)
            return f"{inner}().{'.'.join(reversed(parts))}" if inner else ""
        if not isinstance(node, ast.Name):
            return ""
        parts.append(self.alias.get(node.id, node.id))
        return ".".join(reversed(parts))

    def _is_jit(self, func) -> bool:
        return self._name(func) in JIT

    def _is_partial_jit(self, dec) -> bool:
        return (isinstance(dec, ast.Call) and self._name(dec.func) in ("functools.partial", "partial")
                and bool(dec.args) and self._is_jit(dec.args[0]))

    def _eval(self, node):
        """Integer (or tuple of integers) value of an expression the scan can prove, else None."""
        known = self._eval_k(node)
        if known is None or isinstance(known.value, float):
            return None
        return known.value

    def _eval_k(self, node) -> Known | None:
        """A number or tuple of integers with its evidence: literals, names bound earlier (assignments,
        function defaults, NamedTuple/dataclass fields, factory results), arithmetic, int()/len()."""
        rule = _VALUE_RULES.get(type(node))
        return rule(self, node) if rule is not None else None

    # one rule per expression kind (see _VALUE_RULES) ------------------------------------------
    def _value_constant(self, node: ast.Constant) -> Known | None:
        v = node.value
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return None
        return Known(int(v)) if float(v).is_integer() and abs(v) < 1e15 else Known(float(v))

    def _value_name(self, node: ast.Name) -> Known | None:
        for scope in reversed(self.scopes):  # a parameter shadows a global of the same name
            if node.id in scope:
                return scope[node.id]
        return self.consts.get(node.id)

    def _value_subscript(self, node: ast.Subscript) -> Known | None:
        base = self._eval_k(node.value) or (self._shape_k(node.value) if isinstance(node.value, ast.Attribute)
                                            and node.value.attr == "shape" else None)
        index = self._eval_k(node.slice)
        if base and index and isinstance(base.value, tuple) and isinstance(index.value, int) \
                and -len(base.value) <= index.value < len(base.value):
            return Known(base.value[index.value], join(base, index))
        return None

    def _value_sequence(self, node) -> Known | None:
        values = [v for e in node.elts if (v := self._eval_k(e)) is not None and isinstance(v.value, int)]
        if values and len(values) == len(node.elts):
            return Known(tuple(v.value for v in values), join(*values))
        return None

    def _value_negative(self, node: ast.UnaryOp) -> Known | None:
        if not isinstance(node.op, ast.USub):
            return None
        v = self._eval_k(node.operand)
        return Known(-v.value, v.why) if v and isinstance(v.value, (int, float)) else None

    def _value_call(self, node: ast.Call) -> Known | None:
        """int(x), round(x), len(x) of a provable x."""
        if not isinstance(node.func, ast.Name) or len(node.args) != 1:
            return None
        fn, arg = node.func.id, node.args[0]
        if fn in ("int", "round"):
            v = self._eval_k(arg)
            if v and isinstance(v.value, (int, float)) and abs(v.value) < 1e15:
                return Known(int(round(v.value) if fn == "round" else int(v.value)), v.why)
        elif fn == "len":
            shape = self._shape_k(arg)
            if shape and shape.value:
                return Known(shape.value[0], shape.why)
            v = self._eval_k(arg)
            if v and isinstance(v.value, tuple):
                return Known(len(v.value), v.why)
        return None

    def _arith(self, node: ast.BinOp) -> Known | None:
        a, b = self._eval_k(node.left), self._eval_k(node.right)
        if a is None or b is None or not all(isinstance(x.value, (int, float)) for x in (a, b)):
            return None
        x, y = a.value, b.value
        fn = _ARITH.get(type(node.op))
        if fn is None or isinstance(node.op, ast.Pow) and (abs(y) > 64 or abs(x) > 1e6):
            return None
        try:
            value = fn(x, y)
        except (ZeroDivisionError, OverflowError, TypeError):
            return None
        if not isinstance(value, (int, float)) or isinstance(value, complex) or abs(value) > 1e15:
            return None
        if isinstance(value, float) and value.is_integer() and not isinstance(node.op, ast.Div):
            value = int(value)
        return Known(value, join(a, b))

    def _attribute(self, node: ast.Attribute) -> Known | None:
        if node.attr in ("shape", "size", "ndim"):
            shape = self._shape_k(node.value)
            if shape is not None:
                value = {"shape": shape.value, "size": math.prod(shape.value), "ndim": len(shape.value)}[node.attr]
                return Known(value, shape.why)
        if isinstance(node.value, ast.Name) and node.value.id in self.instances:
            found = self.instances[node.value.id].get(node.attr)
            if found is not None:
                return found
        owners = [o for f in self.fields.values() if (o := f.get(node.attr)) is not None]
        if len({o.value for o in owners}) == 1:
            return owners[0]
        return None

    def _shape_k(self, node) -> Known | None:
        """Shape of an array-valued expression, with evidence: known arrays, constructors, random draws,
        elementwise functions and arithmetic on known arrays, `x.T`."""
        if isinstance(node, ast.Name):
            return self.arrays.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            shape = self._shape_k(node.value)
            return Known(tuple(reversed(shape.value)), shape.why) if shape else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in self.instances and node.attr in self.arrays:
            # a factory builds the array under the field's name and passes it on (`grid=grid`)
            shape = self.arrays[node.attr]
            return shape.plus(f"{node.value.id}.{node.attr} is the `{node.attr}` its factory built")
        if isinstance(node, ast.BinOp):
            shapes = [s for s in (self._shape_k(node.left), self._shape_k(node.right)) if s]
            return max(shapes, key=lambda s: s.elements or 0) if shapes else None
        if isinstance(node, ast.UnaryOp):
            return self._shape_k(node.operand)
        if not isinstance(node, ast.Call):
            return None
        made = constructors.constructed(self, node)
        if made is not None:
            return made[1]
        name = self._name(node.func)
        short = name.rsplit(".", 1)[-1]
        if name.startswith("jax.numpy.") and node.args and short not in REDUCTIONS \
                and not name.startswith("jax.numpy.linalg"):
            if short in ("zeros_like", "ones_like", "empty_like", "full_like", "asarray", "array", "copy") \
                    or len(name.split(".")) == 3:
                return self._shape_k(node.args[0])
        return None

    def _vmap_depth(self, node) -> int:
        """How many vmaps wrap a callable expression (jax.vmap(jax.vmap(f)) is 2; a vmapped name counts)."""
        if isinstance(node, ast.Name):
            return self.vmapped.get(node.id, 0)
        if isinstance(node, ast.Call) and self._name(node.func) == "jax.vmap" and node.args:
            return 1 + self._vmap_depth(node.args[0])
        if isinstance(node, ast.Call) and self._is_jit(node.func) and node.args:  # jax.jit(jax.vmap(f))
            return self._vmap_depth(node.args[0])
        return 0

    def _elements_k(self, node) -> Known | None:
        """Elements a value holds: scalars are 1, arrays their size, tuples the sum of their parts."""
        if isinstance(node, (ast.Tuple, ast.List)):
            parts = [p for e in node.elts if (p := self._elements_k(e)) is not None]
            if parts and len(parts) == len(node.elts):
                return Known(sum(p.value for p in parts), join(*parts))
            return None
        shape = self._shape_k(node)
        if shape is not None and shape.elements is not None:
            return Known(shape.elements, shape.why)
        if isinstance(node, ast.Call) and self._name(node.func).split(".")[-1] in ("array", "asarray", "float32",
                                                                                 "float64", "int32") \
                and node.args and (first := self._eval_k(node.args[0])) is not None \
                and not isinstance(first.value, tuple):
            return Known(1, first.why)
        value = self._eval_k(node)
        if value is not None and isinstance(value.value, (int, float)):
            return Known(1, value.why)
        return None

    def _trips_k(self, node) -> Known | None:
        it = node.iter
        if isinstance(it, (ast.List, ast.Tuple)):
            return Known(len(it.elts))
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            args = [a for arg in it.args if (a := self._eval_k(arg)) is not None and isinstance(a.value, int)]
            if args and len(args) == len(it.args):
                vals = [a.value for a in args][:3]
                step = vals[2] if len(vals) > 2 else 1
                return Known(len(range(*vals)), join(*args)) if step else None
            return None
        if isinstance(it, ast.Name) and it.id in self.consts and isinstance(self.consts[it.id].value, tuple):
            return Known(len(self.consts[it.id].value), self.consts[it.id].why)
        shape = self._shape_k(it)
        if shape is not None and shape.value:
            return Known(shape.value[0], shape.why)
        return None

    def _closed_over(self, fn, seen=None) -> Known | None:
        """The largest array of known size a loop body (a lambda, or a function by name, and the functions it
        calls) reads from outside its parameters: work done inside every step."""
        seen = set() if seen is None else seen
        if isinstance(fn, ast.Name) and fn.id in self.funcdefs and fn.id not in seen:
            seen.add(fn.id)
            fn = self.funcdefs[fn.id]
        if not isinstance(fn, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
        best = None
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in params:
                found = self.arrays.get(n.id)
                found = Known(found.elements, found.why) if found is not None and found.elements else None
                if found is None and n.id in self.funcdefs:
                    found = self._closed_over(n, seen)
                if found is not None and (best is None or found.value > best.value):
                    best = found.plus(f"`{n.id}` read inside the step")
        return best

    def _base_function(self, node) -> str:
        """The function a callable expression wraps: jax.jit(jax.vmap(f)) -> f; a name bound to one -> f."""
        while isinstance(node, ast.Call) and node.args and self._name(node.func) in ("jax.vmap", *JIT):
            node = node.args[0]
        if isinstance(node, ast.Name):
            return self.wrapped.get(node.id, node.id)
        return ""


def _literal(node):
    try:
        return ast.literal_eval(node)
    except Exception:
        return _text(node)


def _text(node) -> str:
    if node is None:
        return ""
    if isinstance(node, ast.Constant):
        return str(node.value)
    try:
        return ast.unparse(node)
    except Exception:
        return "?"


_ARITH = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
          ast.Div: operator.truediv, ast.Mod: operator.mod, ast.Pow: operator.pow}
#: how each kind of expression is evaluated (anything else: not provable)
_VALUE_RULES: dict[type, Callable[[Evaluator, Any], Known | None]] = {
    ast.Constant: Evaluator._value_constant, ast.Name: Evaluator._value_name,
    ast.Attribute: Evaluator._attribute, ast.Subscript: Evaluator._value_subscript,
    ast.Tuple: Evaluator._value_sequence, ast.List: Evaluator._value_sequence,
    ast.UnaryOp: Evaluator._value_negative, ast.BinOp: Evaluator._arith, ast.Call: Evaluator._value_call}
