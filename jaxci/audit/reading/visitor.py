"""The findings visitor of the static scan: walks a lecture's code cells in order and records what JAX work
they do into a `LectureScan` (float64 switches, sequential loops with trip counts and carries, device pins,
GPU narrative in code, NUTS settings, array sizes).

Two passes: names first (imports, jitted and JAX-using functions: cells share one namespace), then findings,
rebinding sizes as assignments are met so a size is the one in force there. Each call construct has its own
handler (`CALL_RULES`, first match wins); sizes, shapes and trip counts come from the evaluator (shapes.py).
"""

from __future__ import annotations

import ast
import math
import re
from typing import TYPE_CHECKING

from jaxci.audit.reading import constructors
from jaxci.audit.reading.constructors import KEY_MAKERS
from jaxci.audit.reading.notebook import to_python
from jaxci.audit.reading.pins import PLATFORM_LISTS, Pin, env_platforms, node_platforms
from jaxci.audit.reading.shapes import Evaluator, _literal, _ordered, _text
from jaxci.audit.reading.sizes import PYTHON_LOOPS, Known, Loop, SizeFinding, join

if TYPE_CHECKING:
    from jaxci.audit.reading.scanrecord import LectureScan

SEQUENTIAL = {"jax.lax.scan": "lax.scan", "jax.lax.fori_loop": "lax.fori_loop",
              "jax.lax.while_loop": "lax.while_loop", "numpyro.contrib.control_flow.scan": "numpyro scan"}
#: the loop kinds that are JAX's own lax constructs (a vmap of the function holding one multiplies its carry)
LAX_LOOPS = ("lax.scan", "lax.fori_loop", "lax.while_loop")
DEVICE_QUERIES = {"jax.devices", "jax.local_devices", "jax.default_backend", "jax.device_count"}
TIMING_MAGICS = {"time", "timeit", "capture", "prun"}
PLATFORM_ENV = {"JAX_PLATFORMS", "JAX_PLATFORM_NAME", "CUDA_VISIBLE_DEVICES"}
PLATFORM_CONFIG = {"jax_platforms", "jax_platform_name", "jax_default_device"}
X64_CALLS = ("numpyro.enable_x64", "jax.experimental.enable_x64")
PIN_CALLS = ("jax.default_device", "numpyro.set_platform")
DEVICE_LISTS = ("jax.devices", "jax.local_devices")
PRINTS = ("print", "display", "IPython.display.display")
MAGICS = ("get_ipython().run_line_magic", "get_ipython().run_cell_magic")
SHELL = ("get_ipython().system", "get_ipython().getoutput")
#: a Python loop with a literal trip count below this is a short series (e.g. over a few sizes), not a
#: sequential computation
SHORT_LOOP = 50

class CodeScan(Evaluator):
    """Two passes over a lecture's code cells: names (imports, jitted and JAX-using functions, sizes bound to
    names with their evidence), then findings. Cells share one namespace, so the first pass spans all of
    them; the second pass rebinds names as it meets their assignments, so a size is the one in force there."""

    def __init__(self, scan: LectureScan):
        super().__init__()
        self.scan = scan
        self.jitted: set[str] = set()
        self.defs: dict[str, list] = {}  # name -> [((cell, line), jitted?)] in order of definition
        self.func_stack: list[str] = []
        self.jax_defs: set = set()  # (cell, line) of each function definition that calls into JAX
        self.jax_funcs: set[str] = set()

    def run(self, cells) -> None:
        for index, tree in cells:
            self.cell = index
            self._names(tree)
        for index, tree in cells:
            self.cell = index
            self._visit(tree)

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

    def _in_force(self, name: str) -> tuple | None:
        """((cell, line), jitted?) of the definition of `name` in force where the scan stands (the latest before
        here, in order), None without one."""
        here = (self.cell, self.line)
        return next((d for d in reversed(self.defs.get(name, [])) if d[0] <= here), None)

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

    def _visit(self, node, in_jit: bool = False) -> None:
        """Findings in source order: the node itself, then its children, then the names it binds."""
        function = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        if function and node.name in self.jitted:
            in_jit = True  # a Python loop in a jitted function is unrolled at trace time, not dispatched
        if isinstance(node, ast.stmt):
            self._statement(node)
        self._finding(node, in_jit)
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

    def _statement(self, node: ast.stmt) -> None:
        """Where the scan stands; a function's defaults and a record's fields are known from here on."""
        self.line = node.lineno
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._function_defaults(node)
        elif isinstance(node, ast.ClassDef):
            self._record_fields(node)

    def _finding(self, node, in_jit: bool) -> None:
        if isinstance(node, (ast.For, ast.While, ast.AsyncFor)):
            if not in_jit:
                self._loop(node)
        elif isinstance(node, ast.Call):
            self._call(node)
        elif isinstance(node, ast.Assign):
            self._environ_assign(node)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                and self._name(node.value.func) in DEVICE_QUERIES:
            self.scan.add_gpu_display(f"cell {self.cell}: displays {self._name(node.value.func)}()")

    def _x64_on(self) -> None:
        if self.scan.x64_cell is None or self.cell < self.scan.x64_cell:
            self.scan.x64_cell = self.cell

    def _where(self) -> str:
        return f"cell {self.cell}"

    def _loop(self, node) -> None:
        """A Python for / while loop around JAX calls: a short series, or a sequential loop with its carry."""
        self._bind_loop_body(node)
        hits, touched, unknown_args = self._jax_calls_in(node)
        if not hits:
            return
        ranked = sorted(hits, key=lambda hit: hit[0])   # the most telling call first
        jitted = ranked[0][2] if ranked[0][0] == 0 else ""  # the notebook's own jitted function, by name
        called = [text for _, text, _ in ranked]
        kind = "while" if isinstance(node, ast.While) else "for"
        trips = self._trips_k(node) if kind == "for" else None
        what = f"Python {kind}-loop around {called[0]}" + (f" ({trips.value} iterations)" if trips else "")
        if trips is not None and trips.value < SHORT_LOOP:
            self.scan.short_loops.append(f"{self._where()}: {what}")
            return
        self._sequential(what, trips.value if trips else None)
        biggest = max(touched, key=lambda k: k.value, default=None)
        carry = biggest if biggest is not None and (not unknown_args or biggest.value >= 10_000) else None
        self._record_loop(PYTHON_LOOPS[kind == "while"], node, trips, carry, f"around {called[0]}",
                          "largest array passed to JAX in the body", jitted=jitted)

    def _bind_loop_body(self, node) -> None:
        """Names bound in the body are in force from the second step on; `x = step(x)` (a result of unknown
        size) keeps x's size."""
        consts, arrays = dict(self.consts), dict(self.arrays)
        for stmt in _ordered(node):
            if isinstance(stmt, ast.Assign) and stmt is not node:
                self._bind(stmt)
        for old, new in ((consts, self.consts), (arrays, self.arrays)):
            for name, known in old.items():
                if name not in self.consts and name not in self.arrays:
                    new[name] = known

    def _jax_calls_in(self, node) -> tuple[list[tuple[int, str, str]], list[Known], bool]:
        """The JAX calls inside a loop (rank, as shown: _jax_call; and at rank 0 the jitted function's name), the
        sizes each step touches (arguments, arrays the called function closes over), and whether some argument's
        size is not known."""
        called: list[tuple[int, str, str]] = []
        touched: list[Known] = []
        unknown_args = False
        for n in ast.walk(node):
            hit = self._jax_call(n) if isinstance(n, ast.Call) else None
            if hit is None or not isinstance(n, ast.Call):
                continue
            called.append((*hit, n.func.id if hit[0] == 0 and isinstance(n.func, ast.Name) else ""))
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
        return called, touched, unknown_args

    def _jax_call(self, n: ast.Call) -> tuple[int, str] | None:
        """A call into JAX: how telling it is of the loop (0 a jitted function of the notebook, 1 a function of its
        that uses JAX, 2 any other) and how it reads ("jitted `f`", "`f` (uses JAX)", "jax.jit(...)(...)",
        "jnp.sum"); None for any other call."""
        called = n.func.id if isinstance(n.func, ast.Name) else None
        defined = self._in_force(called) if called is not None else None
        if defined is not None and defined[1]:
            return 0, f"jitted `{called}`"
        if isinstance(n.func, ast.Call) and self._is_jit(n.func.func):
            return 2, "jax.jit(...)(...)"
        if defined is not None and defined[0] in self.jax_defs:
            return 1, f"`{called}` (uses JAX)"
        name = self._name(n.func)
        return (2, name.replace("jax.numpy.", "jnp.")) if name.startswith(("jax.", "numpyro.")) else None

    def _record_loop(self, kind, node, trips: Known | None, carry: Known | None, what="", carry_note="",
                     jitted="") -> None:
        loop = Loop(kind, self.cell, getattr(node, "lineno", self.line), what=what, jitted=jitted,
                    dtype="float64" if self.scan.x64_cell is not None and self.cell >= self.scan.x64_cell
                    else "float32", func=self.func_stack[-1] if self.func_stack else "")
        if trips is not None:
            loop.trips, loop.trips_why = trips.value, trips.chain()
        if carry is not None:
            loop.carry = carry.value
            loop.carry_why = (carry_note + ": " if carry_note else "") + carry.chain()
        self.scan.loops.append(loop)

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
        """One call: the first rule of CALL_RULES that matches records its finding; then any grid, vmap
        and array size it makes."""
        name = self._name(node.func)
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        handler = next((h for matches, h in CALL_RULES if matches(name, node, kw, self)), None)
        if handler is not None:
            handler(self, node, name, kw)
        if name.endswith("meshgrid"):
            grid = constructors.meshgrid(self, node)
            if grid is not None:
                self._size_found(f"meshgrid{list(grid.value)}", grid, mapped=True)
        depth = self._vmap_depth(node.func)
        if depth:
            self._vmapped_call(node, depth)
        self._sizes(node)

    # call handlers (see CALL_RULES): each gets the call, its resolved dotted name and its keywords ------
    def _config_update(self, node: ast.Call, name: str, kw: dict) -> None:
        key = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else None
        value = node.args[1] if len(node.args) > 1 else None
        if key == "jax_enable_x64" and not (isinstance(value, ast.Constant) and not value.value):
            self.scan.float64.append(f"{self._where()}: jax.config.update('jax_enable_x64', ...)")
            self._x64_on()
        elif key in PLATFORM_CONFIG:
            self._pin(node_platforms(value), f"config {key}={_text(value)}", key)

    def _x64_call(self, node: ast.Call, name: str, kw: dict) -> None:
        if not (node.args and isinstance(node.args[0], ast.Constant) and not node.args[0].value):
            self.scan.float64.append(f"{self._where()}: {name}()")
            self._x64_on()

    def _pin_call(self, node: ast.Call, name: str, kw: dict) -> None:
        """jax.default_device(...), numpyro.set_platform(...), jax.devices("cpu"), local_devices(backend=...)."""
        arg = node.args[0] if node.args else kw.get("platform", kw.get("backend"))
        self._pin(node_platforms(arg), f"{name}({_text(arg)})", name)

    def _print_call(self, node: ast.Call, name: str, kw: dict) -> None:
        for n in ast.walk(node):
            if isinstance(n, ast.Call) and n is not node and self._name(n.func) in DEVICE_QUERIES and not n.args:
                self.scan.add_gpu_display(f"{self._where()}: prints {self._name(n.func)}()")
                break

    def _magic_call(self, node: ast.Call, name: str, kw: dict) -> None:
        self._line_magic(node)
        self._magic_body(node)

    def _shell_call(self, node: ast.Call, name: str, kw: dict) -> None:
        if node.args and isinstance(node.args[0], ast.Constant) and "nvidia-smi" in str(node.args[0].value):
            self.scan.add_gpu_display(f"{self._where()}: runs nvidia-smi")

    def _nuts_call(self, node: ast.Call, name: str, kw: dict) -> None:
        self.scan.nuts.append({"cell": self.cell, "kernel": name,
                               **{k: _literal(v) for k, v in kw.items() if k in ("dense_mass", "max_tree_depth")}})

    def _mcmc_call(self, node: ast.Call, name: str, kw: dict) -> None:
        entry = {"cell": self.cell, "num_chains": _literal(kw["num_chains"]) if "num_chains" in kw else 1,
                 "chain_method": _literal(kw["chain_method"]) if "chain_method" in kw else "parallel"}
        for k in ("num_warmup", "num_samples"):
            if k in kw:
                entry[k] = self._eval(kw[k]) or _literal(kw[k])
        self.scan.nuts.append(entry)

    def _grid_call(self, node: ast.Call, name: str, kw: dict) -> None:
        self.scan.grid = True

    def _pin(self, platforms: tuple, what: str, setting: str) -> None:
        self.scan.pins.append(Pin(self.cell, self.line, platforms, what, setting))

    def _vmapped_call(self, node: ast.Call, depth: int) -> None:
        """vmap over known axes: one vmap maps the leading axis of its largest argument; nested vmaps over
        1-D arguments map their outer product (a grid)."""
        shapes = [s for s in (self._shape_k(a) for a in node.args) if s is not None and s.elements is not None]
        if not shapes:
            return
        if depth >= 2 and len(shapes) >= 2 and all(len(s.value) == 1 for s in shapes[:depth]):
            total = math.prod(s.value[0] for s in shapes[:depth])
            self._size_found(f"vmap x{depth} over {' x '.join(str(s.value[0]) for s in shapes[:depth])}",
                             Known((total,), join(*shapes[:depth])), mapped=True)
            self.scan.grid = True
        else:
            top = max(shapes, key=lambda s: s.elements or 0)
            self._size_found(f"vmap over {list(top.value)}", Known(top.value, top.why), mapped=True)
            self._vmap_loops(node.func, top)

    def _vmap_loops(self, func, axis: Known) -> None:
        """A function holding a lax loop, vmapped over an axis of known size: each step carries that many copies."""
        base = self._base_function(func)
        if not base or not axis.value:
            return
        for loop in self.scan.loops:
            if loop.func == base and loop.kind in LAX_LOOPS and not loop.vmapped:
                loop.carry, loop.vmapped = (loop.carry or 1) * axis.value[0], True
                loop.carry_why = (f"vmap over {axis.value[0]:,} ({axis.chain()}) x "
                                  + (loop.carry_why or "one element per mapped call"))
                self.scan.max_elements = max(self.scan.max_elements or 0, loop.carry)

    def _size_found(self, what: str, known: Known, mapped: bool = False) -> None:
        elements = known.elements
        if elements is None:
            return
        self.scan.size_findings.append(SizeFinding(self.cell, self.line, what, elements, known.chain()
                                                   if known.why else "", mapped))
        self.scan.max_elements = max(self.scan.max_elements or 0, elements)

    def _sizes(self, node: ast.Call) -> None:
        made = constructors.constructed(self, node)
        if made is None or self._name(node.func) in KEY_MAKERS:
            return
        label, shape = made
        self._size_found(f"{label}{list(shape.value)}", shape)

    def _line_magic(self, node: ast.Call) -> None:
        if len(node.args) < 2 or not (isinstance(first := node.args[0], ast.Constant)
                                      and isinstance(second := node.args[1], ast.Constant)):
            return
        magic, line = first.value, str(second.value)
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
                tree = ast.parse(to_python(source))
            except SyntaxError:
                return
            self._names(tree)
            self._visit(tree)

    def _env_setting(self, key: str, value: str, node=None) -> None:
        """An environment variable set to `value` (its text; `node`: the expression, when it is code)."""
        if key == "JAX_ENABLE_X64" and value.strip("'\"").lower() in ("1", "true", "yes"):
            self.scan.float64.append(f"{self._where()}: JAX_ENABLE_X64={value}")
            self._x64_on()
        elif key in PLATFORM_ENV:
            literal = node is None or (isinstance(node, ast.Constant) and isinstance(node.value, str))
            platforms = env_platforms(key, value) if literal else \
                node_platforms(node) if key in PLATFORM_LISTS else ()
            self._pin(platforms, f"{key}={value}", key)

    def _environ_assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and "environ" in self._name(target.value) \
                    and isinstance(target.slice, ast.Constant):
                self._env_setting(str(target.slice.value), _text(node.value), node.value)

    def _environ_call(self, node: ast.Call, name: str = "", kw: dict | None = None) -> None:
        """os.environ.setdefault / update / os.putenv."""
        if len(node.args) >= 2 and isinstance(node.args[0], ast.Constant):
            self._env_setting(str(node.args[0].value), _text(node.args[1]), node.args[1])
        elif node.args and isinstance(node.args[0], ast.Dict):
            for k, v in zip(node.args[0].keys, node.args[0].values):
                if isinstance(k, ast.Constant):
                    self._env_setting(str(k.value), _text(v), v)
        for keyword in node.keywords:
            if keyword.arg:
                self._env_setting(keyword.arg, _text(keyword.value), keyword.value)


def _nested_vmap(node: ast.Call, scan: CodeScan) -> bool:
    """jax.vmap(jax.vmap(f)): a function mapped over a 2-D grid."""
    return bool(node.args) and isinstance(node.args[0], ast.Call) and scan._name(node.args[0].func) == "jax.vmap"


def _environ_rule(name: str, node, kw, scan) -> bool:
    return name.rsplit(".", 1)[-1] in ("setdefault", "update", "putenv") and ("environ" in name or name == "os.putenv")


def _nuts_rule(name: str, node, kw, scan) -> bool:
    return name.rsplit(".", 1)[-1] == "NUTS" and (name.startswith("numpyro") or "nuts" in name.lower())


def _grid_rule(name: str, node, kw, scan) -> bool:
    return name.endswith(("meshgrid", "mgrid")) or name == "jax.vmap" and _nested_vmap(node, scan)


#: (does this call match? (name, call, keywords, scan), its handler), first match wins; a call matching none
#: still counts for grids, vmaps and sizes
CALL_RULES = (
    (lambda name, node, kw, scan: name in SEQUENTIAL, CodeScan._lax_loop),
    (lambda name, node, kw, scan: name.endswith("config.update") and bool(node.args)
     and isinstance(node.args[0], ast.Constant), CodeScan._config_update),
    (lambda name, node, kw, scan: name in X64_CALLS, CodeScan._x64_call),
    (lambda name, node, kw, scan: name in PIN_CALLS, CodeScan._pin_call),
    (lambda name, node, kw, scan: name in DEVICE_LISTS and (bool(node.args) or "backend" in kw), CodeScan._pin_call),
    (lambda name, node, kw, scan: name in PRINTS, CodeScan._print_call),
    (lambda name, node, kw, scan: name.endswith(MAGICS), CodeScan._magic_call),
    (lambda name, node, kw, scan: name.endswith(SHELL), CodeScan._shell_call),
    (_environ_rule, CodeScan._environ_call),
    (_nuts_rule, CodeScan._nuts_call),
    (lambda name, node, kw, scan: name.startswith("numpyro") and name.endswith(".MCMC"), CodeScan._mcmc_call),
    (_grid_rule, CodeScan._grid_call),
)
