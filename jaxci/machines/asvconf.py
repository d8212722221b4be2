"""asv configuration helpers: read asv.conf.json (with // comments) and write a copy that sends every
output (results, html, environments) to another directory, for tests and one-off runs (GPU smoke).
Stock asv reads the copy through `asv --config`."""

from __future__ import annotations

import json
from pathlib import Path

from jaxci import REPO_ROOT


def read_conf(path: Path = REPO_ROOT / "asv.conf.json") -> dict:
    """asv.conf.json allows whole-line // comments; strip them as asv does."""
    text = "\n".join(line for line in Path(path).read_text().splitlines() if not line.lstrip().startswith("//"))
    return json.loads(text)


def write_redirected_conf(out_dir: Path, repo: Path = REPO_ROOT, **overrides) -> Path:
    """A copy of the repo's asv.conf.json whose results/html/env dirs live under out_dir (and any other keys
    `overrides` sets: the capture's repository plugin), written once."""
    out_dir = Path(out_dir)
    conf = read_conf(repo / "asv.conf.json")
    conf.update(repo=str(repo), benchmark_dir=str(repo / "benchmarks"), results_dir=str(out_dir / "results"),
                html_dir=str(out_dir / "html"), env_dir=str(out_dir / "env"), **overrides)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "asv.conf.json"
    path.write_text(json.dumps(conf, indent=2))
    return path
