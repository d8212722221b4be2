"""Downloads a lecture makes at build time, served from local copies when measuring here (this host has no network).

A published build downloads its data; run here, such a lecture stops at its first cell that downloads, and every
later cell is lost to the measurement (sargent_surico reads FRED through pandas_datareader). This module, loaded
into the measuring kernel at start-up (`bash measure/lecture_kernel.sh PREFIX NAME DATA_DIR`), serves those reads
from DATA_DIR instead:

- pandas_datareader's FRED source, from DATA_DIR/fred/SERIES.csv in FRED's own CSV layout (an ISO date column,
  then the series' values). A series without a copy raises, naming the file it wanted.
- a URL read through urllib (pandas' read_csv / read_stata of an http(s) address), from DATA_DIR/web/HOST/PATH
  when that file exists; any other address goes to the network as before.
- FRED's graph download (fred.stlouisfed.org/graph/fredgraph.csv?id=A,B), composed from the same DATA_DIR/fred
  copies in the layout FRED serves today (an `observation_date` column, then one column per series, outer-joined);
  a series without a copy raises as above.

Each kernel writes the series it served to DATA_DIR/served/PID.json, so that `measure/published_builds.py` says of
each lecture that its data came from local copies (their time span may differ from the build's download). Only
the download's own seconds are not measured: they were never part of the work the model predicts.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import os
import sys
from pathlib import Path

ENV = "JAXCI_OFFLINE_DATA"
MODULE = "pandas_datareader.data"


class OfflineCopyMissing(FileNotFoundError):
    """A download this kernel has no local copy of: the lecture needs the network (its name is what the audit's
    failure record reads as `no-network`, jaxci.audit.judging.failure)."""


def data_dir() -> Path | None:
    value = os.environ.get(ENV)
    return Path(value) if value else None


def served_path(folder: Path, pid: int) -> Path:
    return folder / "served" / f"{pid}.json"


def record_served(folder: Path, source: str, names: list[str]) -> None:
    """Adds `source:name` for each name to this kernel's served list."""
    path = served_path(folder, os.getpid())
    path.parent.mkdir(parents=True, exist_ok=True)
    seen = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
    seen += [f"{source}:{n}" for n in names if f"{source}:{n}" not in seen]
    path.write_text(json.dumps(seen), encoding="utf-8")


def fred_frame(folder: Path, names, start=None, end=None):
    """What pandas_datareader's FRED reader returns (one column per series, outer-joined on a DatetimeIndex named
    DATE, cut to [start, end]; start defaults to five years ago as there), read from the local copies."""
    import pandas as pd

    names = [names] if isinstance(names, str) else list(names)
    columns = []
    for name in names:
        path = folder / "fred" / f"{name}.csv"
        if not path.is_file():
            raise OfflineCopyMissing(f"offline data: no local copy of FRED series {name!r}: expected {path} ({ENV})")
        frame = pd.read_csv(path, index_col=0)
        frame.index = pd.to_datetime(frame.index, format="%Y-%m-%d")
        columns.append(pd.to_numeric(frame.iloc[:, 0], errors="coerce").rename(name))
    out = pd.concat(columns, axis=1, join="outer").sort_index()
    out.index.name = "DATE"
    start = pd.Timestamp(start) if start is not None else pd.Timestamp.today().normalize() - pd.DateOffset(years=5)
    end = pd.Timestamp(end) if end is not None else pd.Timestamp.today().normalize()
    record_served(folder, "FRED", names)
    return out.loc[start:end]


def patch_datareader(module, folder: Path) -> None:
    """pandas_datareader.data.DataReader reads FRED from the local copies; other sources are left as they are."""
    original = module.DataReader

    def DataReader(name, data_source=None, start=None, end=None, *args, **kwargs):
        if str(data_source).lower() != "fred":
            return original(name, data_source, start, end, *args, **kwargs)
        return fred_frame(folder, name, start, end)

    DataReader.__doc__ = original.__doc__
    module.DataReader = DataReader


def local_copy(folder: Path, url: str) -> Path | None:
    """DATA_DIR/web/HOST/PATH for an http(s) URL (query and fragment dropped), when that file exists."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    path = folder / "web" / parts.netloc / parts.path.lstrip("/")
    inside = path.resolve().is_relative_to((folder / "web").resolve())
    return path if inside and path.is_file() else None


FREDGRAPH = ("fred.stlouisfed.org", "/graph/fredgraph.csv")


def fredgraph_ids(url: str) -> list[str] | None:
    """The series a fredgraph.csv address asks for (its `id` query, comma-separated), or None for any other
    address."""
    from urllib.parse import parse_qs, urlsplit

    parts = urlsplit(url)
    if (parts.netloc, parts.path) != FREDGRAPH:
        return None
    ids = [i.strip() for v in parse_qs(parts.query).get("id", []) for i in v.split(",") if i.strip()]
    return ids or None


def fredgraph_bytes(folder: Path, ids: list[str]) -> bytes:
    """What fredgraph.csv serves for these series, from the local copies: every observation (no date cut), an
    empty field where a series has no value (as fredgraph writes it, so that pandas reads a missing value)."""
    frame = fred_frame(folder, ids, "1600-01-01", "2999-12-31")
    frame.index.name = "observation_date"
    return frame.to_csv(date_format="%Y-%m-%d").encode("utf-8")


def patch_urlopen(module, folder: Path) -> None:
    """urllib.request.urlopen answers from a local copy where one exists (a 200 response with its bytes)."""
    import email.message
    import io
    import urllib.response

    original = module.urlopen

    def urlopen(url, *args, **kwargs):
        address = url.full_url if hasattr(url, "full_url") else str(url)
        ids = fredgraph_ids(address)
        path = None if ids else local_copy(folder, address)
        if ids:
            body = fredgraph_bytes(folder, ids)
        elif path is not None:
            record_served(folder, "URL", [address])
            body = path.read_bytes()
        else:
            return original(url, *args, **kwargs)
        headers = email.message.Message()
        headers["Content-Length"] = str(len(body))
        return urllib.response.addinfourl(io.BytesIO(body), headers, address, 200)

    urlopen.__doc__ = original.__doc__
    module.urlopen = urlopen


class _PatchOnImport(importlib.abc.MetaPathFinder):
    """Patches pandas_datareader.data right after it executes, whoever imports it first (the package's own
    __init__ imports it, binding the patched name)."""

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, name, path, target=None):
        if name != MODULE:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        run, folder = spec.loader.exec_module, self.folder

        def exec_module(module):
            run(module)
            patch_datareader(module, folder)

        spec.loader.exec_module = exec_module
        return spec


def install() -> bool:
    """Serve downloads from JAXCI_OFFLINE_DATA in this process; False (nothing done) when it is not set."""
    folder = data_dir()
    if folder is None:
        return False
    if not folder.is_dir():
        raise FileNotFoundError(f"offline data: {ENV}={folder} is not a folder")
    loaded = sys.modules.get(MODULE)
    if loaded is not None:
        patch_datareader(loaded, folder)
    else:
        sys.meta_path.insert(0, _PatchOnImport(folder))
    import urllib.request

    patch_urlopen(urllib.request, folder)
    return True


def serve_from(kernel_json: Path, module: Path, folder: Path) -> dict:
    """Rewrites a kernelspec so that its kernels serve downloads from `folder`: JAXCI_OFFLINE_DATA in its env,
    and this module (copied to `module`) run at start-up as one of IPython's exec_lines, in its own namespace
    (nothing lands in the notebook's). Returns the new spec."""
    try:
        spec = json.loads(kernel_json.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, RecursionError, json.JSONDecodeError) as exc:
        raise ValueError(f"{kernel_json}: not a kernelspec's JSON ({type(exc).__name__})") from None
    if not isinstance(spec, dict) or not isinstance(spec.get("argv"), list) \
            or not all(isinstance(a, str) for a in spec["argv"]) or not isinstance(spec.get("env", {}), dict):
        raise ValueError(f"{kernel_json}: not a kernelspec (expected an object with an argv list of strings)")
    spec["argv"] = [a for a in spec["argv"] if not a.startswith("--IPKernelApp.exec_lines=")]
    spec["argv"].append(f"--IPKernelApp.exec_lines=__import__('runpy').run_path({str(module)!r}, "
                        f"run_name='jaxci_offline_data') and None")
    spec.setdefault("env", {})[ENV] = str(folder.resolve())
    kernel_json.write_text(json.dumps(spec, indent=1), encoding="utf-8")
    return spec


def main(argv: list[str] | None = None) -> int:
    import argparse
    import shutil

    p = argparse.ArgumentParser(description="make a kernelspec serve the lectures' downloads from local copies")
    p.add_argument("kernel_json", type=Path)
    p.add_argument("data_dir", type=Path, help="holds fred/SERIES.csv")
    args = p.parse_args(argv)
    if not args.data_dir.is_dir():
        print(f"offline_data: {args.data_dir} is not a folder", file=sys.stderr)
        return 2
    if not args.kernel_json.is_file():
        print(f"offline_data: {args.kernel_json}: no such kernelspec", file=sys.stderr)
        return 2
    module = args.kernel_json.parent / "offline_data.py"
    try:
        shutil.copyfile(__file__, module)
        serve_from(args.kernel_json, module, args.data_dir)
    except (OSError, ValueError) as exc:
        print(f"offline_data: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    return 0


if __name__ == "jaxci_offline_data":  # run at kernel start-up by the measuring kernel's exec_lines
    install()
elif __name__ == "__main__":
    sys.exit(main())
