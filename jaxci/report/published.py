"""Published incident figures (docs/reference/incidents.md) as reference points for the time-vs-size figures.

They are drawn beside our measured lines, labelled "published", and never enter any number the report
computes. Only figures whose workload matches a suite's kernel at a stated size are taken: the compiled
(warm) rows of the direct-timings table, and the long scalar loop of incident 1.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# incidents.md: the "CPU runner" is GitHub-hosted (AMD EPYC, 4 cores), the "T4 runner" a g4dn.2xlarge
COLUMNS = ("CPU runner", "T4 runner")
_ROW = re.compile(r"^\|\s*(?P<what>[^|]+?),\s*compiled\s*\|\s*(?P<cpu>[\d.]+)\s*s\s*\|\s*(?P<gpu>[\d.]+)\s*s\s*\|")
_KERNELS = [  # (pattern in the row name, benchmark, case params, size from the match)
    (re.compile(r"(\d+)x\1 matmul"), "dense.Dense.time_warm", (("op", "matmul"),), lambda m: int(m[1])),
    (re.compile(r"(\d+)M-element elementwise"), "elementwise.Elementwise.time_warm", (), lambda m: int(m[1]) * 1_000_000),
]
_SCAN_LONG = re.compile(r"about ([\d.]+) s on CPU and about ([\d.]+) s on the T4 at n = ([\d,]+)")
_SCAN_SHORT = re.compile(r"at n = ([\d,]+): ([\d.]+) s GPU vs ([\d.]+) s CPU")
SCAN = ("loops.Scan.time_warm", (("unroll", 1),))


@dataclass(frozen=True)
class Point:
    benchmark: str
    case: tuple
    dtype: str          # "float32", or "unstated" where the incident does not say
    column: str         # "CPU runner" | "T4 runner"
    n: int
    seconds: float
    what: str


@dataclass(frozen=True)
class DirectRow:
    what: str
    benchmark: str
    case: tuple
    n: int
    cpu_s: float
    gpu_s: float


def direct_timings(text: str) -> list[DirectRow]:
    """The compiled rows of the direct-timings table whose workload is a suite kernel at a stated size
    (float32: the table's heading says so)."""
    out = []
    for line in text.splitlines():
        m = _ROW.match(line.strip())
        if not m:
            continue
        for pattern, bench, case, size in _KERNELS:
            k = pattern.search(m["what"])
            if k:
                out.append(DirectRow(m["what"].strip(), bench, case, size(k), float(m["cpu"]), float(m["gpu"])))
    return out


def points(text: str) -> list[Point]:
    out = []
    for row in direct_timings(text):
        out.append(Point(row.benchmark, row.case, "float32", COLUMNS[0], row.n, row.cpu_s, row.what))
        out.append(Point(row.benchmark, row.case, "float32", COLUMNS[1], row.n, row.gpu_s, row.what))
    flat = " ".join(text.split())
    for m in _SCAN_LONG.finditer(flat):
        n = int(m[3].replace(",", ""))
        out += [Point(*SCAN, "unstated", COLUMNS[0], n, float(m[1]), "incident 1: scalar lax.scan"),
                Point(*SCAN, "unstated", COLUMNS[1], n, float(m[2]), "incident 1: scalar lax.scan")]
    for m in _SCAN_SHORT.finditer(flat):
        n = int(m[1].replace(",", ""))
        out += [Point(*SCAN, "unstated", COLUMNS[0], n, float(m[3]), "incident 1: scalar lax.scan"),
                Point(*SCAN, "unstated", COLUMNS[1], n, float(m[2]), "incident 1: scalar lax.scan")]
    return out


def for_kernel(pts, benchmark: str, case: tuple) -> list[Point]:
    """Published points of one figure's kernel (a case matches when its stated params agree)."""
    have = dict(case)
    return [p for p in pts if p.benchmark == benchmark and all(have.get(k) == v for k, v in p.case)]
