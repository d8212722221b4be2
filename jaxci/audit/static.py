"""Static scan of one lecture: what JAX work it does, read from its code cells (ast) and markdown (regex).

No code is executed. IPython syntax (magics, `!shell`) is turned into Python by IPython's own input
transformer, and the bodies of `%time`/`%%time`-style magics are parsed too. Every finding carries the
cell it came from, so a maintainer can check it. Classification into a regime lives in classify.py.
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from jaxci.audit.sizes import Known, Loop, SizeFinding, join

SEQUENTIAL = {"jax.lax.scan": "lax.scan", "jax.lax.fori_loop": "lax.fori_loop",
              "jax.lax.while_loop": "lax.while_loop", "numpyro.contrib.control_flow.scan": "numpyro scan"}
JIT = {"jax.jit", "jax.pmap", "equinox.filter_jit"}
NUMPY_MODULES = ("numpy", "jax.numpy")
CONSTRUCTORS = {"zeros", "ones", "empty", "full", "arange", "linspace", "logspace", "geomspace", "eye", "identity"}
RANDOM_SIZE_METHODS = {"normal", "uniform", "standard_normal", "random", "integers", "choice", "exponential",
                       "randn", "rand", "randint", "multivariate_normal", "gamma", "beta", "poisson", "binomial"}
DEVICE_QUERIES = {"jax.devices", "jax.local_devices", "jax.default_backend", "jax.device_count"}
TIMING_MAGICS = {"time", "timeit", "capture", "prun"}
PLATFORM_ENV = {"JAX_PLATFORMS", "JAX_PLATFORM_NAME", "CUDA_VISIBLE_DEVICES"}
PLATFORM_CONFIG = {"jax_platforms", "jax_platform_name", "jax_default_device"}
#: cell tags Jupyter Book (nbclient) tolerates: an expected error, a cell never executed
RAISES_TAG, SKIP_TAG = "raises-exception", "skip-execution"
#: a Python loop with a literal trip count below this is a short series (e.g. over a few sizes), not a
#: sequential computation
SHORT_LOOP = 50
ADMONITIONS = {"note", "admonition", "warning", "tip", "important", "attention", "caution", "danger", "error",
               "hint", "seealso", "dropdown"}
GPU_WORD = re.compile(r"\bGPUs?\b|\bCUDA\b|\bT4\b|\baccelerator", re.I)
SPEED_WORD = re.compile(r"\b(fast|faster|fastest|speed|speeds|speed-?up|accelerat\w*|quick\w*|slow\w*|"
                        r"orders? of magnitude|x faster)\b", re.I)
FENCE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}(?P<arg>.*)$")


@dataclass
class LectureScan:
    """What the scan found in one lecture; cell numbers are 0-based positions in the notebook."""

    path: str
    status: str = "ok"  # ok | error (e.g. a cell with a syntax error) | unreadable
    errors: list[str] = field(default_factory=list)
    code_cells: int = 0
    uses_jax: bool = False
    uses_numpyro: bool = False
    float64: list[str] = field(default_factory=list)
    sequential: list[str] = field(default_factory=list)  # long or unknown-length sequential constructs
    short_loops: list[str] = field(default_factory=list)  # Python loops over JAX calls with few iterations
    loop_length: int | None = None  # longest literal trip count seen on a sequential construct
    nuts: list[dict] = field(default_factory=list)
    device_pins: list[str] = field(default_factory=list)
    gpu_narrative: list[str] = field(default_factory=list)
    sizes: list[str] = field(default_factory=list)
    max_elements: int | None = None
    grid: bool = False  # meshgrid / vmap over a grid seen
    x64_cell: int | None = None  # the first cell where float64 is switched on (earlier cells run float32)
    timeout_override: float | None = None  # the notebook's own execution timeout metadata, if any
    loops: list[Loop] = field(default_factory=list)  # every long or unknown-length loop, with carry and trips
    size_findings: list[SizeFinding] = field(default_factory=list)  # sizes with their evidence chain
    imports: list[str] = field(default_factory=list)  # top-level modules imported
    notes: list[str] = field(default_factory=list)  # tolerated: raises-exception / skip-execution cells

    @property
    def pinned_cpu(self) -> bool:
        return any("cpu" in pin.lower() for pin in self.device_pins)

    def as_dict(self) -> dict:
        return {**asdict(self), "pinned_cpu": self.pinned_cpu}


def scan_notebook(nb, path: str) -> LectureScan:
    """Scan a NotebookNode; never raises for bad cell contents (they become `errors`)."""
    scan = LectureScan(path)
    meta = nb.get("metadata", {})
    scan.timeout_override = _timeout_metadata(meta)
    code = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            scan.code_cells += 1
            tags = cell_tags(cell)
            if SKIP_TAG in tags:
                scan.notes.append(f"cell {index}: tagged {SKIP_TAG}: not executed by the book, not scanned")
                continue
            errors = len(scan.errors)
            tree = _parse_cell(cell.source, index, scan)
            if RAISES_TAG in tags and len(scan.errors) > errors:
                scan.notes += [f"{e} (tagged {RAISES_TAG}: expected)" for e in scan.errors[errors:]]
                del scan.errors[errors:]
            if tree is not None:
                code.append((index, tree))
        elif cell.cell_type == "markdown":
            _scan_markdown(cell.source, index, scan)
    _CodeScan(scan).run(code)
    if scan.errors:
        scan.status = "error"
    return scan


def cell_tags(cell) -> set[str]:
    """A cell's tags (MyST `:tags:` options land in metadata.tags through jupytext)."""
    tags = (cell.get("metadata") or {}).get("tags") or []
    return {str(t) for t in tags} if isinstance(tags, (list, tuple)) else set()


def _timeout_metadata(meta) -> float | None:
    for outer, inner in (("execution", "timeout"), ("mystnb", "execution_timeout")):
        value = (meta.get(outer) or {}).get(inner) if isinstance(meta.get(outer), dict) else None
        if isinstance(value, (int, float)):
            return float(value)
    return None


_TRANSFORMER = None


def _to_python(source: str) -> str:
    """IPython syntax (magics, !shell, help?) as plain Python calls, through IPython's own transformer."""
    global _TRANSFORMER
    if not any(mark in source for mark in ("%", "!", "?")):
        return source
    if _TRANSFORMER is None:
        from IPython.core.inputtransformer2 import TransformerManager

        _TRANSFORMER = TransformerManager()
    return _TRANSFORMER.transform_cell(source)


def _parse_cell(source: str, index: int, scan: LectureScan) -> ast.Module | None:
    try:
        return ast.parse(_to_python(source))
    except SyntaxError as exc:
        scan.errors.append(f"cell {index} line {exc.lineno}: SyntaxError: {exc.msg}")
    except Exception as exc:  # the IPython transformer on very odd input
        scan.errors.append(f"cell {index}: cannot parse: {type(exc).__name__}: {exc}")
    return None


# ---------------------------------------------------------------- markdown


def _scan_markdown(text: str, index: int, scan: LectureScan) -> None:
    lines = text.splitlines()
    inside: list[tuple[str, str, int]] = []  # open directive fences: (fence, name, start line)
    body: dict[int, list[str]] = {}
    plain = []
    for lineno, line in enumerate(lines):
        stripped = line.strip()
        match = FENCE.match(stripped)
        if match:
            name = match["name"].split(":")[-1].lower()
            if name == "include" and re.search(r"gpu", match["arg"], re.I):
                scan.gpu_narrative.append(f"cell {index}: includes {match['arg'].strip()}")
            inside.append((match["fence"], name, lineno))
            body[lineno] = [match["arg"]]
            continue
        if inside and stripped and set(stripped) <= {"`", ":"} and stripped == inside[-1][0]:
            fence, name, start = inside.pop()
            text_in = "\n".join(body.pop(start))
            if name in ADMONITIONS and GPU_WORD.search(text_in):
                scan.gpu_narrative.append(f"cell {index}: {{{name}}} directive mentioning the GPU")
            if inside:  # nested: the outer directive sees the inner text too
                body[inside[-1][2]].append(text_in)
            continue
        if inside:
            body[inside[-1][2]].append(line)
        else:
            plain.append(line)
    for sentence in re.split(r"(?<=[.!?])\s+", " ".join(plain)):
        if GPU_WORD.search(sentence) and SPEED_WORD.search(sentence):
            scan.gpu_narrative.append(f"cell {index}: text about GPU speed: {sentence.strip()[:80]!r}")
            break


# ---------------------------------------------------------------- code

#: jax.numpy functions whose result is smaller than their first argument (a size must not pass through them)
REDUCTIONS = {"sum", "mean", "max", "min", "prod", "std", "var", "argmax", "argmin", "dot", "vdot", "matmul",
              "inner", "outer", "linalg", "trace", "median", "percentile", "quantile", "any", "all", "count_nonzero",
              "searchsorted", "interp", "diff", "cumsum", "cumprod", "reshape", "ravel", "take", "where"}
KEY_MAKERS = {"jax.random.PRNGKey", "jax.random.key"}
#: jax.random samplers -> position of their `shape` argument (after the key and the distribution's own)
RANDOM_SHAPE_ARG = {**dict.fromkeys(("normal", "uniform", "randint", "exponential", "laplace", "logistic",
                                     "cauchy", "gumbel", "rademacher", "bits", "truncated_normal_std"), 1),
                    **dict.fromkeys(("choice", "bernoulli", "gamma", "poisson", "t", "dirichlet",
                                     "chisquare", "loggamma", "pareto", "weibull_min"), 2),
                    **dict.fromkeys(("beta", "categorical", "multivariate_normal", "truncated_normal"), 3)}


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


class _CodeScan:
    """Two passes over a lecture's code cells: names (imports, jitted and JAX-using functions, sizes bound to
    names with their evidence), then findings. Cells share one namespace, so the first pass spans all of
    them; the second pass rebinds names as it meets their assignments, so a size is the one in force there."""

    def __init__(self, scan: LectureScan):
        self.scan = scan
        self.alias: dict[str, str] = {}
        self.consts: dict[str, Known] = {}  # name -> integer / tuple / float scalar
        self.arrays: dict[str, Known] = {}  # name -> shape of the array it holds
        self.defaults: dict[str, list] = {}  # function -> [(param, Known | None)] in order
        self.scopes: list[dict] = []  # the enclosing functions' parameters -> default (None: not known)
        self.fields: dict[str, dict[str, Known]] = {}  # NamedTuple / dataclass -> field -> default
        self.instances: dict[str, dict[str, Known]] = {}  # name -> attribute -> value (factory or constructor)
        self.vmapped: dict[str, int] = {}  # name -> vmap depth
        self.jitted: set[str] = set()
        self.defs: dict[str, list] = {}  # name -> [((cell, line), jitted?)] in order of definition
        self.funcdefs: dict[str, ast.AST] = {}  # function name -> its def (closed-over arrays of a loop body)
        self.wrapped: dict[str, str] = {}  # name bound to jit/vmap(...) of a function -> that function
        self.func_stack: list[str] = []
        self.jax_defs: set = set()  # (cell, line) of each function definition that calls into JAX
        self.jax_funcs: set[str] = set()
        self.cell = 0
        self.line = 0

    def run(self, cells) -> None:
        for index, tree in cells:
            self.cell = index
            self._names(tree)
        for index, tree in cells:
            self.cell = index
            self._visit(tree)

    # names -------------------------------------------------------------
    def _names(self, tree) -> None:
        """Imports, jitted and JAX-using functions (needed before the findings pass); sizes are bound in
        source order by the findings pass itself."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.alias[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    self._uses(a.name)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.alias[a.asname or a.name] = f"{node.module}.{a.name}"
                self._uses(node.module)
            elif isinstance(node, ast.Assign):
                jit = isinstance(node.value, ast.Call) and self._is_jit(node.value.func)
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.defs.setdefault(t.id, []).append(((self.cell, node.lineno), jit))
                        if jit:
                            self.jitted.add(t.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcdefs[node.name] = node
                jit = any(self._is_jit(d.func if isinstance(d, ast.Call) else d) or self._is_partial_jit(d)
                          for d in node.decorator_list)
                self.defs.setdefault(node.name, []).append(((self.cell, node.lineno), jit))
                if jit:
                    self.jitted.add(node.name)
        self._jax_functions(tree, [])

    def _jitted_here(self, name: str) -> bool:
        """Is `name` a jitted function where the scan stands (its latest definition before here, in order)?"""
        here = (self.cell, self.line)
        before = [jit for at, jit in self.defs.get(name, []) if at <= here]
        return bool(before) and before[-1]

    def _uses_jax_here(self, name: str) -> bool:
        """Does the definition of `name` in force here (the latest before, in order) call into JAX?"""
        here = (self.cell, self.line)
        before = [at for at, _ in self.defs.get(name, []) if at <= here]
        return bool(before) and before[-1] in self.jax_defs

    def _jax_functions(self, node, enclosing: list) -> None:
        """Functions that call into JAX (directly or in a nested function): one walk, after the imports."""
        if isinstance(node, ast.Call) and enclosing and self._name(node.func).startswith(("jax.", "numpyro.")):
            self.jax_funcs.update(name for name, _ in enclosing)
            self.jax_defs.update(at for _, at in enclosing)
        inner = enclosing + [(node.name, (self.cell, node.lineno))] \
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else enclosing
        for child in ast.iter_child_nodes(node):
            self._jax_functions(child, inner)

    def _uses(self, module: str) -> None:
        root = module.split(".")[0]
        self.scan.imports = sorted(set(self.scan.imports) | {root})
        if root == "jax":
            self.scan.uses_jax = True
        elif root == "numpyro":
            self.scan.uses_numpyro = True

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
                grids = self._meshgrid(node.value) if isinstance(node.value, ast.Call) else None
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
        fields = {}
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
            params = [(k, v) for k, v in self.fields[name].items()]
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

    # values ------------------------------------------------------------
    def _eval(self, node):
        """Integer (or tuple of integers) value of an expression the scan can prove, else None."""
        known = self._eval_k(node)
        if known is None or isinstance(known.value, float):
            return None
        return known.value

    def _eval_k(self, node) -> Known | None:
        """A number or tuple of integers with its evidence: literals, names bound earlier (assignments,
        function defaults, NamedTuple/dataclass fields, factory results), arithmetic, int()/len()."""
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            v = node.value
            if float(v).is_integer() and abs(v) < 1e15:
                return Known(int(v))
            return Known(float(v))
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):  # a parameter shadows a global of the same name
                if node.id in scope:
                    return scope[node.id]
            return self.consts.get(node.id)
        if isinstance(node, ast.Attribute):
            return self._attribute(node)
        if isinstance(node, ast.Subscript):
            base = self._eval_k(node.value) or (self._shape_k(node.value) if isinstance(node.value, ast.Attribute)
                                                and node.value.attr == "shape" else None)
            index = self._eval_k(node.slice)
            if base and index and isinstance(base.value, tuple) and isinstance(index.value, int) \
                    and -len(base.value) <= index.value < len(base.value):
                return Known(base.value[index.value], join(base, index))
            return None
        if isinstance(node, (ast.Tuple, ast.List)):
            values = [self._eval_k(e) for e in node.elts]
            if values and all(v is not None and isinstance(v.value, int) for v in values):
                return Known(tuple(v.value for v in values), join(*values))
            return None
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self._eval_k(node.operand)
            return Known(-v.value, v.why) if v and isinstance(v.value, (int, float)) else None
        if isinstance(node, ast.BinOp):
            return self._arith(node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 1:
            fn = node.func.id
            if fn in ("int", "round"):
                v = self._eval_k(node.args[0])
                if v and isinstance(v.value, (int, float)) and abs(v.value) < 1e15:
                    return Known(int(round(v.value) if fn == "round" else int(v.value)), v.why)
            elif fn == "len":
                shape = self._shape_k(node.args[0])
                if shape and shape.value:
                    return Known(shape.value[0], shape.why)
                v = self._eval_k(node.args[0])
                if v and isinstance(v.value, tuple):
                    return Known(len(v.value), v.why)
        return None

    def _arith(self, node: ast.BinOp) -> Known | None:
        a, b = self._eval_k(node.left), self._eval_k(node.right)
        if a is None or b is None or not all(isinstance(x.value, (int, float)) for x in (a, b)):
            return None
        x, y = a.value, b.value
        try:
            if isinstance(node.op, ast.Pow):
                if abs(y) > 64 or abs(x) > 1e6:
                    return None
                value = x ** y
            else:
                ops = {ast.Add: lambda: x + y, ast.Sub: lambda: x - y, ast.Mult: lambda: x * y,
                       ast.FloorDiv: lambda: x // y, ast.Div: lambda: x / y, ast.Mod: lambda: x % y}
                fn = ops.get(type(node.op))
                if fn is None:
                    return None
                value = fn()
        except (ZeroDivisionError, OverflowError, TypeError):
            return None
        if not isinstance(value, (int, float)) or isinstance(value, complex) or abs(value) > 1e15:
            return None
        if isinstance(value, float) and value.is_integer() and isinstance(node.op, ast.Div) is False:
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
        owners = [f[node.attr] for f in self.fields.values() if f.get(node.attr) is not None]
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
        made = self._constructed(node)
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

    def _constructed(self, node: ast.Call):
        """(label, shape) of an array constructor or random draw with a provable shape, else None."""
        name = self._name(node.func)
        short = name.rsplit(".", 1)[-1]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        module = name.rsplit(".", 1)[0] if "." in name else ""
        shape_node = None
        if name in KEY_MAKERS:
            return name, Known((2,))
        if module in NUMPY_MODULES and short in ("array", "asarray") and node.args \
                and isinstance(node.args[0], (ast.List, ast.Tuple)):
            return None  # literal data: tiny, not worth a size line
        if module in NUMPY_MODULES and short in CONSTRUCTORS:
            if short in ("linspace", "logspace", "geomspace"):
                num = kw.get("num") or (node.args[2] if len(node.args) > 2 else None)
                if num is None:
                    return (short, Known((50,), ("numpy default num=50",)))
                shape_node = num
            elif short == "arange":
                args = [self._eval_k(a) for a in node.args]
                if args and all(a is not None and isinstance(a.value, (int, float)) for a in args):
                    vals = [a.value for a in args]
                    length = math.ceil((vals[1] - vals[0]) / (vals[2] if len(vals) > 2 else 1)) if len(vals) > 1 \
                        else math.ceil(vals[0])
                    return short, Known((max(int(length), 0),), join(*args))
                return None
            elif short in ("eye", "identity"):
                n = self._eval_k(node.args[0]) if node.args else None
                return (short, Known((n.value, n.value), n.why)) if n and isinstance(n.value, int) else None
            else:
                shape_node = kw.get("shape") or (node.args[0] if node.args else None)
        elif name.startswith("jax.random.") and short in RANDOM_SHAPE_ARG:
            at = RANDOM_SHAPE_ARG[short]
            shape_node = kw.get("shape") or (node.args[at] if len(node.args) > at else None)
        elif short in RANDOM_SIZE_METHODS and ("random" in name or "rng" in name.lower() or "size" in kw):
            if "size" in kw:
                shape_node = kw["size"]
            elif short in ("randn", "rand"):
                shape_node = ast.Tuple(elts=list(node.args), ctx=ast.Load())
        elif short == "split" and name.startswith("jax.random"):
            return None
        if shape_node is None:
            return None
        value = self._eval_k(shape_node)
        if value is None or isinstance(value.value, float):
            return None
        shape = value.value if isinstance(value.value, tuple) else (value.value,)
        if not shape or not all(isinstance(v, int) and v >= 0 for v in shape):
            return None
        label = short if module in NUMPY_MODULES else name.replace("jax.random.", "random.")
        return label, Known(shape, value.why)

    def _meshgrid(self, node: ast.Call) -> Known | None:
        """Shape of each output of meshgrid(a, b, ...): the product of the inputs' lengths."""
        if not self._name(node.func).endswith("meshgrid") or not node.args:
            return None
        shapes = [self._shape_k(a) for a in node.args]
        if not all(s is not None and s.elements is not None for s in shapes):
            return None
        dims = tuple(s.elements for s in shapes)
        ij = any(k.arg == "indexing" and isinstance(k.value, ast.Constant) and k.value.value == "ij"
                 for k in node.keywords)
        if len(dims) >= 2 and not ij:
            dims = (dims[1], dims[0], *dims[2:])
        return Known(dims, join(*shapes))

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
            parts = [self._elements_k(e) for e in node.elts]
            if parts and all(p is not None for p in parts):
                return Known(sum(p.value for p in parts), join(*parts))
            return None
        shape = self._shape_k(node)
        if shape is not None and shape.elements is not None:
            return Known(shape.elements, shape.why)
        if isinstance(node, ast.Call) and self._name(node.func).split(".")[-1] in ("array", "asarray", "float32",
                                                                                 "float64", "int32") \
                and node.args and self._eval_k(node.args[0]) is not None \
                and not isinstance(self._eval_k(node.args[0]).value, tuple):
            return Known(1, self._eval_k(node.args[0]).why)
        value = self._eval_k(node)
        if value is not None and isinstance(value.value, (int, float)):
            return Known(1, value.why)
        return None

    # findings ----------------------------------------------------------
    def _visit(self, node, in_jit: bool = False) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in self.jitted:
            in_jit = True  # a Python loop in a jitted function is unrolled at trace time, not dispatched
        if isinstance(node, ast.stmt):
            self.line = node.lineno
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function_defaults(node)
            elif isinstance(node, ast.ClassDef):
                self._record_fields(node)
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            if not in_jit:
                self._loop(node)
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Assign):
            self._environ_assign(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and self._name(node.value.func) in DEVICE_QUERIES:
            self.scan.gpu_narrative.append(f"cell {self.cell}: displays {self._name(node.value.func)}()")
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if function:
            self.scopes.append(dict(self.defaults.get(node.name, [])))
            self.func_stack.append(node.name)
        for child in ast.iter_child_nodes(node):
            self._visit(child, in_jit)
        if function:
            self.scopes.pop()
            self.func_stack.pop()
        if isinstance(node, ast.Assign):  # rebind after the right-hand side was scanned
            self._bind(node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            self._bind_name(node.target.id, node.value, node)

    def _x64_on(self) -> None:
        if self.scan.x64_cell is None or self.cell < self.scan.x64_cell:
            self.scan.x64_cell = self.cell

    def _where(self) -> str:
        return f"cell {self.cell}"

    def _loop(self, node) -> None:
        consts, arrays = dict(self.consts), dict(self.arrays)
        for stmt in _ordered(node):  # names bound in the body are in force from the second step on
            if isinstance(stmt, ast.Assign) and stmt is not node:
                self._bind(stmt)
        for old, new in ((consts, self.consts), (arrays, self.arrays)):
            for name, known in old.items():  # `x = step(x)`: a result of unknown size keeps x's size
                if name not in self.consts and name not in self.arrays:
                    new[name] = known
        called = []
        touched: list[Known] = []
        unknown_args = False
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                name = self._name(n.func)
                hit = None
                if isinstance(n.func, ast.Name) and self._jitted_here(n.func.id):
                    hit = f"jitted `{n.func.id}`"
                elif isinstance(n.func, ast.Call) and self._is_jit(n.func.func):
                    hit = "jax.jit(...)(...)"
                elif isinstance(n.func, ast.Name) and self._uses_jax_here(n.func.id):
                    hit = f"`{n.func.id}` (uses JAX)"
                elif name.startswith(("jax.", "numpyro.")):
                    hit = name.replace("jax.numpy.", "jnp.")
                if hit is None:
                    continue
                called.append(hit)
                if isinstance(n.func, ast.Name):
                    inner = self._closed_over(ast.Name(self.wrapped.get(n.func.id, n.func.id), ast.Load()))
                    if inner is not None:
                        touched.append(inner)
                for arg in list(n.args) + [k.value for k in n.keywords]:
                    size = self._elements_k(arg)
                    if size is None:
                        unknown_args = True
                    else:
                        touched.append(size)
        if not called:
            return
        called.sort(key=lambda c: (not c.startswith("jitted"), "uses JAX" not in c))
        kind = "while" if isinstance(node, ast.While) else "for"
        trips = self._trips_k(node) if kind == "for" else None
        what = f"Python {kind}-loop around {called[0]}" + (f" ({trips.value} iterations)" if trips else "")
        if trips is not None and trips.value < SHORT_LOOP:
            self.scan.short_loops.append(f"{self._where()}: {what}")
            return
        self._sequential(what, trips.value if trips else None)
        biggest = max(touched, key=lambda k: k.value, default=None)
        carry = biggest if biggest is not None and (not unknown_args or biggest.value >= 10_000) else None
        self._record_loop(f"Python {kind} loop", node, trips, carry, f"around {called[0]}",
                          "largest array passed to JAX in the body")

    def _record_loop(self, kind, node, trips: Known | None, carry: Known | None, what="", carry_note="") -> None:
        loop = Loop(kind, self.cell, getattr(node, "lineno", self.line), what=what,
                    dtype="float64" if self.scan.x64_cell is not None and self.cell >= self.scan.x64_cell
                    else "float32", func=self.func_stack[-1] if self.func_stack else "")
        if trips is not None:
            loop.trips, loop.trips_why = trips.value, trips.chain()
        if carry is not None:
            loop.carry = carry.value
            loop.carry_why = (carry_note + ": " if carry_note else "") + carry.chain()
        self.scan.loops.append(loop)

    def _trips_k(self, node) -> Known | None:
        it = node.iter
        if isinstance(it, (ast.List, ast.Tuple)):
            return Known(len(it.elts))
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            args = [self._eval_k(a) for a in it.args]
            if args and all(a is not None and isinstance(a.value, int) for a in args):
                vals = [a.value for a in args]
                start, stop, step = ((0, vals[0], 1) if len(vals) == 1
                                     else (vals[0], vals[1], vals[2] if len(vals) > 2 else 1))
                return Known(max(len(range(start, stop, step)), 0), join(*args)) if step else None
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

    def _sequential(self, what: str, length: int | None) -> None:
        self.scan.sequential.append(f"{self._where()}: {what}")
        if length is not None:
            self.scan.loop_length = max(self.scan.loop_length or 0, length)

    def _lax_loop(self, node: ast.Call, name: str, kw: dict) -> None:
        short = name.rsplit(".", 1)[-1]
        args = list(node.args)
        trips = carry = None
        if "length" in kw:
            trips = self._eval_k(kw["length"])
        if short == "fori_loop":
            lo, hi = (args + [None, None])[:2]
            lo, hi = kw.get("lower", lo), kw.get("upper", hi)
            a, b = self._eval_k(lo), self._eval_k(hi)
            if a and b and isinstance(a.value, int) and isinstance(b.value, int):
                trips = Known(b.value - a.value, join(a, b))
            init = kw.get("init_val", args[3] if len(args) > 3 else None)
        elif short == "while_loop":
            init = kw.get("init_val", args[2] if len(args) > 2 else None)
        else:  # scan
            init = kw.get("init", args[1] if len(args) > 1 else None)
            xs = kw.get("xs", args[2] if len(args) > 2 else None)
            if xs is not None and not (isinstance(xs, ast.Constant) and xs.value is None):
                if isinstance(xs, ast.Call):
                    self._sizes(xs)
                shape = self._shape_k(xs)
                if trips is None and shape is not None and shape.value:
                    trips = Known(shape.value[0], shape.why)
        if trips is not None and not isinstance(trips.value, int):
            trips = None
        if init is not None:
            carry = self._elements_k(init)
        body = {"fori_loop": 2, "while_loop": 1}.get(short, 0)
        inner = self._closed_over(kw.get("body_fun", kw.get("f", args[body] if len(args) > body else None)))
        note = "initial carry"
        if inner is not None and (carry is None or inner.value > carry.value):
            carry, note = inner, "largest array the step closes over or uses"
        label = SEQUENTIAL[name] + (f" (length {trips.value})" if trips else "")
        if trips is None or trips.value >= SHORT_LOOP:
            self._sequential(label, trips.value if trips else None)
            self._record_loop(SEQUENTIAL[name], node, trips, carry, carry_note=note)
        else:
            self.scan.short_loops.append(f"{self._where()}: {label}")

    def _call(self, node: ast.Call) -> None:
        name = self._name(node.func)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        short = name.rsplit(".", 1)[-1]
        if name in SEQUENTIAL:
            self._lax_loop(node, name, kw)
        elif name.endswith("config.update") and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
            value = node.args[1] if len(node.args) > 1 else None
            if key == "jax_enable_x64" and not (isinstance(value, ast.Constant) and not value.value):
                self.scan.float64.append(f"{self._where()}: jax.config.update('jax_enable_x64', ...)")
                self._x64_on()
            elif key in PLATFORM_CONFIG:
                self.scan.device_pins.append(f"{self._where()}: config {key}={_text(value)}")
        elif name in ("numpyro.enable_x64", "jax.experimental.enable_x64"):
            if not (node.args and isinstance(node.args[0], ast.Constant) and not node.args[0].value):
                self.scan.float64.append(f"{self._where()}: {name}()")
                self._x64_on()
        elif name in ("jax.default_device", "numpyro.set_platform"):
            arg = node.args[0] if node.args else kw.get("platform")
            self.scan.device_pins.append(f"{self._where()}: {name}({_text(arg)})")
        elif name in ("jax.devices", "jax.local_devices") and (node.args or "backend" in kw):
            arg = node.args[0] if node.args else kw["backend"]
            self.scan.device_pins.append(f"{self._where()}: {name}({_text(arg)})")
        elif name in ("print", "display", "IPython.display.display"):
            for n in ast.walk(node):
                if isinstance(n, ast.Call) and n is not node and self._name(n.func) in DEVICE_QUERIES and not n.args:
                    self.scan.gpu_narrative.append(f"{self._where()}: prints {self._name(n.func)}()")
                    break
        elif name.endswith("get_ipython().run_line_magic") or name.endswith("get_ipython().run_cell_magic"):
            self._line_magic(node)
            self._magic_body(node)
        elif name.endswith("get_ipython().system") or name.endswith("get_ipython().getoutput"):
            if node.args and isinstance(node.args[0], ast.Constant) and "nvidia-smi" in str(node.args[0].value):
                self.scan.gpu_narrative.append(f"{self._where()}: runs nvidia-smi")
        elif short in ("setdefault", "update", "putenv") and ("environ" in name or name == "os.putenv"):
            self._environ_call(node)
        elif short == "NUTS" and (name.startswith("numpyro") or "nuts" in name.lower()):
            self.scan.nuts.append({"cell": self.cell, "kernel": name,
                                   **{k: _literal(v) for k, v in kw.items() if k in ("dense_mass", "max_tree_depth")}})
        elif short == "MCMC" and name.startswith("numpyro"):
            entry = {"cell": self.cell, "num_chains": _literal(kw["num_chains"]) if "num_chains" in kw else 1,
                     "chain_method": _literal(kw["chain_method"]) if "chain_method" in kw else "parallel"}
            for k in ("num_warmup", "num_samples"):
                if k in kw:
                    entry[k] = self._eval(kw[k]) or _literal(kw[k])
            self.scan.nuts.append(entry)
        elif name.endswith(("meshgrid", "mgrid")) or name == "jax.vmap" and _nested_vmap(node, self):
            self.scan.grid = True
        if name.endswith("meshgrid"):
            grid = self._meshgrid(node)
            if grid is not None:
                self._size_found(f"meshgrid{list(grid.value)}", grid)
        depth = self._vmap_depth(node.func)
        if depth:
            self._vmapped_call(node, depth)
        self._sizes(node)

    def _vmapped_call(self, node: ast.Call, depth: int) -> None:
        """vmap over known axes: one vmap maps the leading axis of its largest argument; nested vmaps over
        1-D arguments map their outer product (a grid)."""
        shapes = [s for s in (self._shape_k(a) for a in node.args) if s is not None and s.elements is not None]
        if not shapes:
            return
        if depth >= 2 and len(shapes) >= 2 and all(len(s.value) == 1 for s in shapes[:depth]):
            total = math.prod(s.value[0] for s in shapes[:depth])
            self._size_found(f"vmap x{depth} over {' x '.join(str(s.value[0]) for s in shapes[:depth])}",
                             Known((total,), join(*shapes[:depth])))
            self.scan.grid = True
        else:
            top = max(shapes, key=lambda s: s.elements)
            self._size_found(f"vmap over {list(top.value)}", Known(top.value, top.why))
            self._vmap_loops(node.func, top)

    def _vmap_loops(self, func, axis: Known) -> None:
        """A function holding a lax loop, vmapped over an axis of known size: each step carries that many copies."""
        base = self._base_function(func)
        if not base or not axis.value:
            return
        for loop in self.scan.loops:
            if loop.func == base and loop.kind.startswith("lax.") and "vmap over" not in loop.carry_why:
                loop.carry = (loop.carry or 1) * axis.value[0]
                loop.carry_why = (f"vmap over {axis.value[0]:,} ({axis.chain()}) x "
                                  + (loop.carry_why or "one element per mapped call"))
                self.scan.max_elements = max(self.scan.max_elements or 0, loop.carry)

    def _base_function(self, node) -> str:
        """The function a callable expression wraps: jax.jit(jax.vmap(f)) -> f; a name bound to one -> f."""
        while isinstance(node, ast.Call) and node.args and self._name(node.func) in ("jax.vmap", *JIT):
            node = node.args[0]
        if isinstance(node, ast.Name):
            return self.wrapped.get(node.id, node.id)
        return ""

    def _size_found(self, what: str, known: Known) -> None:
        elements = known.elements
        if elements is None:
            return
        self.scan.sizes.append(f"cell {self.cell}: {what} = {elements:,} elements")
        self.scan.size_findings.append(SizeFinding(self.cell, self.line, what, elements, known.chain()
                                                   if known.why else ""))
        self.scan.max_elements = max(self.scan.max_elements or 0, elements)

    def _sizes(self, node: ast.Call) -> None:
        made = self._constructed(node)
        if made is None or self._name(node.func) in KEY_MAKERS:
            return
        label, shape = made
        self._size_found(f"{label}{list(shape.value)}", shape)

    def _line_magic(self, node: ast.Call) -> None:
        if len(node.args) < 2 or not all(isinstance(a, ast.Constant) for a in node.args[:2]):
            return
        magic, line = node.args[0].value, str(node.args[1].value)
        if magic == "env":
            m = re.match(r"\s*(\w+)\s*[= ]\s*(\S+)", line)
            if m:
                self._env_setting(m[1], m[2])

    def _magic_body(self, node: ast.Call) -> None:
        """%time / %%time bodies are strings after IPython's transform: scan them as code too."""
        name = self._name(node.func)
        if not (name.endswith("run_line_magic") or name.endswith("run_cell_magic")) or len(node.args) < 2:
            return
        if not (isinstance(node.args[0], ast.Constant) and node.args[0].value in TIMING_MAGICS):
            return
        body = node.args[2] if name.endswith("run_cell_magic") and len(node.args) > 2 else node.args[1]
        if isinstance(body, ast.Constant) and isinstance(body.value, str):
            source = re.sub(r"^\s*(-\S+\s+)*", "", body.value) if name.endswith("run_line_magic") else body.value
            try:
                tree = ast.parse(_to_python(source))
            except SyntaxError:
                return
            self._names(tree)
            self._visit(tree)

    def _env_setting(self, key: str, value: str) -> None:
        if key == "JAX_ENABLE_X64" and value.strip("'\"").lower() in ("1", "true", "yes"):
            self.scan.float64.append(f"{self._where()}: JAX_ENABLE_X64={value}")
            self._x64_on()
        elif key in PLATFORM_ENV:
            self.scan.device_pins.append(f"{self._where()}: {key}={value}")

    def _environ_assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and "environ" in self._name(target.value) \
                    and isinstance(target.slice, ast.Constant):
                self._env_setting(str(target.slice.value), _text(node.value))

    def _environ_call(self, node: ast.Call) -> None:
        if len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
            self._env_setting(str(node.args[0].value), _text(node.args[1]))
        elif node.args and isinstance(node.args[0], ast.Dict):
            for k, v in zip(node.args[0].keys, node.args[0].values):
                if isinstance(k, ast.Constant):
                    self._env_setting(str(k.value), _text(v))
        for k in node.keywords:
            if k.arg:
                self._env_setting(k.arg, _text(k.value))


def _nested_vmap(node: ast.Call, scan: _CodeScan) -> bool:
    """jax.vmap(jax.vmap(f)): a function mapped over a 2-D grid."""
    return bool(node.args) and isinstance(node.args[0], ast.Call) and scan._name(node.args[0].func) == "jax.vmap"


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


def is_lecture(path: Path, text: str | None = None) -> bool:
    """A .ipynb, or a .md that is a MyST notebook (has code-cell directives or a kernelspec header)."""
    if path.suffix == ".ipynb":
        return True
    if path.suffix != ".md":
        return False
    head = text if text is not None else path.read_text(encoding="utf-8", errors="replace")
    return "{code-cell}" in head or ("kernelspec:" in head[:2000] and head.startswith("---"))
