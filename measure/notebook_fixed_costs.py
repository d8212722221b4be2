"""What a notebook pays in a build before and around its own work, measured here in a real Jupyter kernel.

    .venv/bin/python measure/notebook_fixed_costs.py [--kernel K] [--packages a,b,c] [--warm N] [--cold N]
        [--write docs/reference/notebook-fixed-costs.md]

A build runs every notebook in a fresh kernel (jupyter-cache, mystmd, nbclient alike), so each pays:

- the kernel's start: launching the kernel process until it answers (jupyter_client's `wait_for_ready`);
- the imports the lecture makes, in the order lectures make them (numpy, scipy, matplotlib, ..., JAX): each
  package timed inside the kernel, what an earlier one already loaded not counted again;
- JAX's CPU client (`jax.devices("cpu")`, the backend start a lecture's first JAX op pays);
- the first figure (drawn and encoded to PNG, what the inline backend does at the cell's end).

Cold: the kernel's site-packages and standard library evicted from the page cache first (`posix_fadvise`
DONTNEED on every file), as on a runner's first notebook of a build from a fresh disk. Warm: the same again at
once (every later notebook of the build). Each figure is the median of its runs, with the fastest and slowest.
This host's pure-Python probe (the project's `int_sum` at 10M, the one the incidents publish for the CPU and T4
runners) is taken before and after: the figures move to a family's host by the published probe over it, which
`jaxci predict --kernel notebook_start` does. `--write FILE` puts the summary under FILE's "## Measured here"
heading (docs/reference/notebook-fixed-costs.md, the rest of the file kept), and the data the runner model reads
(jaxci.modeldata.fixed_costs) in the .json file beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

#: the lecture stack in the order a lecture imports it (a module the kernel lacks is reported, not timed)
PACKAGES = ("numpy", "scipy", "matplotlib.pyplot", "pandas", "numba", "quantecon", "jax", "numpyro")
#: timed inside the kernel; prints one JSON line
INSIDE = r"""
import json as _j, time as _t
_out = {}
for _name in %(packages)r:
    _t0 = _t.perf_counter()
    try:
        __import__(_name)
    except Exception as _exc:
        _out[_name] = "not installed: " + type(_exc).__name__
        continue
    _out[_name] = _t.perf_counter() - _t0
if isinstance(_out.get("jax"), float):
    import jax as _jax
    _t0 = _t.perf_counter()
    _jax.devices("cpu")
    _out["jax CPU client"] = _t.perf_counter() - _t0
if isinstance(_out.get("matplotlib.pyplot"), float):
    import io as _io
    import matplotlib.pyplot as _plt
    _t0 = _t.perf_counter()
    _fig, _ax = _plt.subplots()
    _ax.plot([0, 1, 2], [0, 1, 4])
    _fig.savefig(_io.BytesIO(), format="png")
    _out["first figure"] = _t.perf_counter() - _t0
    _plt.close(_fig)
print(_j.dumps(_out))
"""


def kernel_python(kernel: str) -> str:
    """The interpreter the kernelspec runs."""
    from jupyter_client.kernelspec import KernelSpecManager

    argv = KernelSpecManager().get_kernel_spec(kernel).argv
    return sys.executable if argv[0] in ("python", "python3") else argv[0]


def evict(python: str) -> int:
    """Drop the interpreter's standard library and site-packages from the page cache; the files touched."""
    code = "import site, sysconfig; print('\\n'.join(site.getsitepackages() + [sysconfig.get_paths()['stdlib']]))"
    roots = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    n = 0
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                try:
                    fd = os.open(os.path.join(folder, name), os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    n += 1
                finally:
                    os.close(fd)
    return n


def one_notebook(kernel: str, packages: tuple) -> dict:
    """A fresh kernel's start and what its imports, CPU client and first figure took (seconds)."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name=kernel)
    t0 = time.perf_counter()
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        out = {"kernel start": time.perf_counter() - t0}
        lines: list[str] = []
        reply = kc.execute_interactive(INSIDE % {"packages": list(packages)}, timeout=600,
                                       output_hook=lambda msg: lines.append(_stdout(msg)))
        if reply["content"]["status"] != "ok":
            raise RuntimeError(f"kernel {kernel}: {reply['content'].get('ename')}: {reply['content'].get('evalue')}")
        out.update(json.loads("".join(lines).strip().splitlines()[-1]))  # the last line INSIDE prints
        return out
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def _stdout(msg: dict) -> str:
    """A kernel message's standard-output text ('' for anything else: warnings go to stderr)."""
    content = msg.get("content", {})
    return content.get("text", "") if msg.get("msg_type") == "stream" and content.get("name") == "stdout" else ""


def summarise(runs: list[dict]) -> dict:
    """Per term: median, fastest, slowest and n over the runs that timed it (a string says why not)."""
    out: dict = {}
    for key in dict.fromkeys(k for r in runs for k in r):
        values = [r[key] for r in runs if isinstance(r.get(key), float)]
        out[key] = ({"s": round(statistics.median(values), 4), "low": round(min(values), 4),
                     "high": round(max(values), 4), "n": len(values)} if values else
                    next(r[key] for r in runs if key in r))
    return out


def probe_s() -> float:
    from jaxci.audit.runner.host_probe import probe

    return probe(n=10_000_000, repeat=3).seconds


def measure(kernel: str, packages: tuple, warm: int, cold: int) -> dict:
    python = kernel_python(kernel)
    before, load0 = probe_s(), os.getloadavg()[0]
    cold_runs, evicted = [], 0
    for _ in range(cold):
        evicted = evict(python)
        cold_runs.append(one_notebook(kernel, packages))
    one_notebook(kernel, packages)  # the cache filled again before the warm runs
    warm_runs = [one_notebook(kernel, packages) for _ in range(warm)]
    after, load1 = probe_s(), os.getloadavg()[0]
    return {"when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "kernel": kernel,
            "python": python, "cpu": _cpu(), "load": [round(load0, 2), round(load1, 2)],
            "probe_s": [round(before, 4), round(after, 4)], "files_evicted": evicted,
            "cold": summarise(cold_runs), "warm": summarise(warm_runs)}


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} vCPU"
    except OSError:
        pass
    return f"{os.cpu_count()} vCPU"


def render(found: dict) -> str:
    lines = [f"Measured {found['when']}: kernel {found['kernel']} ({found['python']}), {found['cpu']}; "
             f"load {found['load'][0]} before, "
             f"{found['load'][1]} after; int_sum 10M probe {found['probe_s'][0]} s before, {found['probe_s'][1]} s "
             f"after; cold = {found['files_evicted']:,} files evicted from the page cache", "",
             "| term | cold s (median, range, n) | warm s (median, range, n) |", "|---|---|---|"]
    for key in found["warm"]:
        lines.append(f"| {key} | {_cell(found['cold'].get(key))} | {_cell(found['warm'][key])} |")
    lines += ["", "- the seconds above are data: `notebook-fixed-costs.json` beside this file (format "
              "`jaxci-notebook-fixed-costs`, version 1), written with this section by the same command and read by "
              "`jaxci.results.fixed_costs`; this page is never read."]
    return "\n".join(lines) + "\n"


def data(found: dict, command: str) -> dict:
    """The record the runner model reads (jaxci.results.fixed_costs): each term's median, cold and warm, and the
    probes taken beside them."""
    from jaxci.results.fixed_costs import record

    compact = {side: {k: v["s"] for k, v in found[side].items() if isinstance(v, dict)} for side in ("cold", "warm")}
    return record({**compact, "probe_s": found["probe_s"], "when": found["when"], "host": found["cpu"],
                   "measured_by": command})


def _cell(v) -> str:
    if v is None:
        return "not measured"
    if isinstance(v, str):
        return v
    return f"{v['s']:.3g} ({v['low']:.3g}-{v['high']:.3g}, n={v['n']})"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernel", default="python3", help="the Jupyter kernel the lectures run in")
    p.add_argument("--packages", default=",".join(PACKAGES), help="imported in this order")
    p.add_argument("--warm", type=int, default=5, help="warm runs (median)")
    p.add_argument("--cold", type=int, default=3, help="cold runs, each after an eviction (median)")
    p.add_argument("--write", type=Path, metavar="FILE.md",
                   help="put the summary under FILE.md's '## Measured here' and the data in FILE.json beside it")
    p.add_argument("--format", choices=("md", "json"), default="md")
    args = p.parse_args(argv)
    found = measure(args.kernel, tuple(args.packages.split(",")), args.warm, args.cold)
    text = render(found)
    print(json.dumps(found, indent=1) if args.format == "json" else text)
    if args.write:
        from jaxci.modeldata.fixed_costs import with_section

        old = args.write.read_text(encoding="utf-8") if args.write.is_file() else ""
        args.write.write_text(with_section(old, "## Measured here", text), encoding="utf-8")
        command = f"measure/notebook_fixed_costs.py --kernel {args.kernel} --write {args.write}"
        beside = args.write.with_suffix(".json")
        beside.write_text(json.dumps(data(found, command), indent=1) + "\n", encoding="utf-8")
        print(f"written: {args.write}, {beside}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
