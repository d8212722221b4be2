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
    timeout_override: float | None = None  # the notebook's own execution timeout metadata, if any

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
            tree = _parse_cell(cell.source, index, scan)
            if tree is not None:
                code.append((index, tree))
        elif cell.cell_type == "markdown":
            _scan_markdown(cell.source, index, scan)
    _CodeScan(scan).run(code)
    if scan.errors:
        scan.status = "error"
    return scan


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


class _CodeScan:
    """Two passes over a lecture's code cells: names (imports, jitted and JAX-using functions, integer
    constants), then findings. Cells share one namespace, so the first pass spans all of them."""

    def __init__(self, scan: LectureScan):
        self.scan = scan
        self.alias: dict[str, str] = {}
        self.consts: dict[str, object] = {}
        self.jitted: set[str] = set()
        self.jax_funcs: set[str] = set()

    def run(self, cells) -> None:
        for _, tree in cells:
            self._names(tree)
        for index, tree in cells:
            self.cell = index
            self._visit(tree)

    # names -------------------------------------------------------------
    def _names(self, tree) -> None:
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
                value = self._eval(node.value)
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        if value is not None:
                            self.consts[target.id] = value
                        if isinstance(node.value, ast.Call) and self._is_jit(node.value.func):
                            self.jitted.add(target.id)
                    elif isinstance(target, ast.Tuple) and isinstance(value, tuple) \
                            and len(value) == len(target.elts):
                        for elt, v in zip(target.elts, value):
                            if isinstance(elt, ast.Name):
                                self.consts[elt.id] = v
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(self._is_jit(d.func if isinstance(d, ast.Call) else d) or self._is_partial_jit(d)
                       for d in node.decorator_list):
                    self.jitted.add(node.name)
        for node in ast.walk(tree):  # after imports are known: functions that call into JAX
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    isinstance(n, ast.Call) and self._name(n.func).startswith(("jax.", "numpyro."))
                    for n in ast.walk(node)):
                self.jax_funcs.add(node.name)

    def _uses(self, module: str) -> None:
        root = module.split(".")[0]
        if root == "jax":
            self.scan.uses_jax = True
        elif root == "numpyro":
            self.scan.uses_numpyro = True

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
        """Integer (or tuple of integers) value of a literal expression, else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            v = node.value
            return int(v) if float(v).is_integer() and abs(v) < 1e15 else None
        if isinstance(node, ast.Name):
            return self.consts.get(node.id)
        if isinstance(node, (ast.Tuple, ast.List)):
            values = tuple(self._eval(e) for e in node.elts)
            return values if all(isinstance(v, int) for v in values) else None
        if isinstance(node, ast.BinOp):
            a, b = self._eval(node.left), self._eval(node.right)
            if isinstance(a, int) and isinstance(b, int):
                ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
                       ast.FloorDiv: lambda: a // b if b else None,
                       ast.Pow: lambda: a ** b if 0 <= b < 64 and abs(a) < 1e6 else None}
                fn = ops.get(type(node.op))
                return fn() if fn else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" \
                and len(node.args) == 1:
            return self._eval(node.args[0])
        return None

    # findings ----------------------------------------------------------
    def _visit(self, node, in_jit: bool = False) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in self.jitted:
            in_jit = True  # a Python loop in a jitted function is unrolled at trace time, not dispatched
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
        for child in ast.iter_child_nodes(node):
            self._visit(child, in_jit)

    def _where(self) -> str:
        return f"cell {self.cell}"

    def _loop(self, node) -> None:
        called = []
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                name = self._name(n.func)
                if isinstance(n.func, ast.Name) and n.func.id in self.jitted:
                    called.append(f"jitted `{n.func.id}`")
                elif isinstance(n.func, ast.Call) and self._is_jit(n.func.func):
                    called.append("jax.jit(...)(...)")
                elif isinstance(n.func, ast.Name) and n.func.id in self.jax_funcs:
                    called.append(f"`{n.func.id}` (uses JAX)")
                elif name.startswith(("jax.", "numpyro.")):
                    called.append(name.replace("jax.numpy.", "jnp."))
        if not called:
            return
        kind = "while" if isinstance(node, ast.While) else "for"
        trips = self._trips(node) if kind == "for" else None
        what = f"Python {kind}-loop around {called[0]}" + (f" ({trips} iterations)" if trips else "")
        if trips is not None and trips < SHORT_LOOP:
            self.scan.short_loops.append(f"{self._where()}: {what}")
        else:
            self._sequential(what, trips)

    def _trips(self, node) -> int | None:
        it = node.iter
        if isinstance(it, (ast.List, ast.Tuple)):
            return len(it.elts)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            args = [self._eval(a) for a in it.args]
            if all(isinstance(a, int) for a in args) and args:
                start, stop, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
                return max(len(range(start, stop, step)), 0) if step else None
        if isinstance(it, ast.Name) and isinstance(self.consts.get(it.id), tuple):
            return len(self.consts[it.id])
        return None

    def _sequential(self, what: str, length: int | None) -> None:
        self.scan.sequential.append(f"{self._where()}: {what}")
        if length is not None:
            self.scan.loop_length = max(self.scan.loop_length or 0, length)

    def _call(self, node: ast.Call) -> None:
        name = self._name(node.func)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        short = name.rsplit(".", 1)[-1]
        if name in SEQUENTIAL:
            length = None
            if "length" in kw:
                length = self._eval(kw["length"])
            elif short == "fori_loop" and len(node.args) >= 2:
                lo, hi = self._eval(node.args[0]), self._eval(node.args[1])
                length = hi - lo if isinstance(lo, int) and isinstance(hi, int) else None
            elif short == "scan" and len(node.args) >= 3:
                xs = node.args[2]
                if isinstance(xs, ast.Call):
                    self._sizes(xs)
            label = SEQUENTIAL[name] + (f" (length {length})" if length else "")
            if length is None or length >= SHORT_LOOP:
                self._sequential(label, length)
            else:
                self.scan.short_loops.append(f"{self._where()}: {label}")
        elif name.endswith("config.update") and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
            value = node.args[1] if len(node.args) > 1 else None
            if key == "jax_enable_x64" and not (isinstance(value, ast.Constant) and not value.value):
                self.scan.float64.append(f"{self._where()}: jax.config.update('jax_enable_x64', ...)")
            elif key in PLATFORM_CONFIG:
                self.scan.device_pins.append(f"{self._where()}: config {key}={_text(value)}")
        elif name in ("numpyro.enable_x64", "jax.experimental.enable_x64"):
            if not (node.args and isinstance(node.args[0], ast.Constant) and not node.args[0].value):
                self.scan.float64.append(f"{self._where()}: {name}()")
        elif name in ("jax.default_device", "numpyro.set_platform"):
            arg = node.args[0] if node.args else kw.get("platform")
            self.scan.device_pins.append(f"{self._where()}: {name}({_text(arg)})")
        elif name in ("jax.devices", "jax.local_devices") and (node.args or "backend" in kw):
            self.scan.device_pins.append(f"{self._where()}: {name}({_text(node.args[0] if node.args else kw['backend'])})")
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
        self._sizes(node)

    def _sizes(self, node: ast.Call) -> None:
        name = self._name(node.func)
        short = name.rsplit(".", 1)[-1]
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        shape = None
        module = name.rsplit(".", 1)[0] if "." in name else ""
        if module in NUMPY_MODULES and short in CONSTRUCTORS:
            if short in ("linspace", "logspace", "geomspace"):
                shape = kw.get("num") or (node.args[2] if len(node.args) > 2 else None)
            elif short == "arange":
                args = [self._eval(a) for a in node.args]
                if args and all(isinstance(a, int) for a in args):
                    shape = ast.Constant(len(range(*args[:3])) if len(args) > 1 else args[0])
            elif short in ("eye", "identity"):
                n = self._eval(node.args[0]) if node.args else None
                shape = ast.Tuple(elts=[node.args[0], node.args[0]], ctx=ast.Load()) if isinstance(n, int) else None
            else:
                shape = kw.get("shape") or (node.args[0] if node.args else None)
        elif name.startswith("jax.random.") and short not in ("PRNGKey", "key", "split", "fold_in"):
            shape = kw.get("shape") or (node.args[1] if len(node.args) > 1 else None)
        elif short in RANDOM_SIZE_METHODS and ("random" in name or "rng" in name.lower() or "size" in kw):
            if "size" in kw:
                shape = kw["size"]
            elif short in ("randn", "rand"):
                shape = ast.Tuple(elts=list(node.args), ctx=ast.Load())
        if shape is None:
            return
        value = self._eval(shape)
        if isinstance(value, int):
            value = (value,)
        if isinstance(value, tuple) and value and all(isinstance(v, int) and v >= 0 for v in value):
            elements = math.prod(value)
            label = short if module in NUMPY_MODULES else name.replace("jax.random.", "random.")
            self.scan.sizes.append(f"cell {self.cell}: {label}{list(value)} = {elements:,} elements")
            self.scan.max_elements = max(self.scan.max_elements or 0, elements)

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
