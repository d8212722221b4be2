"""docs/reference/notebook-fixed-costs.md read as the runner model's notebook fixed costs (jaxci.analysis.fixed_costs).

The file is written by `measure/notebook_fixed_costs.py --write` (its `- notebook fixed costs:` line: seconds per
term cold and warm, and the probes) and by `measure/dev_sets.py --calibrate` (its `- per-notebook residual:` line:
the residual in probe units with its band and where it was fitted). Each line is JSON. A missing file gives None
(the model then says "not measured"); a line that is not JSON, or holds no number where one is due, is an error
naming the file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from jaxci.analysis.fixed_costs import FixedCosts
from jaxci.analysis.primitives import Band

COSTS_LINE = re.compile(r"^- notebook fixed costs: (.*)$", re.M)
RESIDUAL_LINE = re.compile(r"^- per-notebook residual: (.*)$", re.M)


class FixedCostsError(ValueError):
    """The file exists but a line cannot be read: said with the file's name."""


def default_path() -> Path:
    from jaxci import REPO_ROOT

    return REPO_ROOT / "docs" / "reference" / "notebook-fixed-costs.md"


def load(path: Path | None = None) -> FixedCosts | None:
    path = Path(path) if path else default_path()
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    costs = COSTS_LINE.search(text)
    if costs is None:
        raise FixedCostsError(f"{path}: no '- notebook fixed costs:' line")
    found = _json(costs.group(1), path)
    try:
        warm, cold = _seconds(found["warm"]), _seconds(found["cold"])
        probes = tuple(float(p) for p in found["probe_s"] if float(p) > 0)
    except (KeyError, TypeError, ValueError) as exc:
        raise FixedCostsError(f"{path}: notebook fixed costs line unreadable ({exc})") from None
    if not probes or not warm:
        raise FixedCostsError(f"{path}: notebook fixed costs line has no probe or no warm term")
    residual, source, scale = _residual(text, path)
    return FixedCosts(warm, cold, probes, f"measured here ({path.name}: {found.get('when', 'date not given')}, "
                                         f"{found.get('host', 'host not given')})", residual, source, scale)


def _residual(text: str, path: Path) -> tuple[Band | None, str, float]:
    line = RESIDUAL_LINE.search(text)
    if line is None:
        return None, "", 1.0
    found = _json(line.group(1), path)
    try:
        band = Band.of(float(found["probe_units"]), float(found["low"]), float(found["high"]))
        scale = float(found.get("scale", 1.0))
        if not scale > 0:
            raise ValueError(f"scale {scale!r} is not positive")
        return band, str(found["source"]), scale
    except (KeyError, TypeError, ValueError) as exc:
        raise FixedCostsError(f"{path}: per-notebook residual line unreadable ({exc})") from None


def _json(text: str, path: Path) -> dict:
    try:
        found = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FixedCostsError(f"{path}: a line is not JSON ({exc})") from None
    if not isinstance(found, dict):
        raise FixedCostsError(f"{path}: a line is not a JSON object")
    return found


def _seconds(terms: dict) -> dict:
    out = {str(k): float(v) for k, v in terms.items()}
    if any(not (v >= 0) for v in out.values()):
        raise ValueError("a negative or NaN term")
    return out


def with_section(text: str, heading: str, body: str) -> str:
    """`text` with the section under `heading` ('## ...') replaced by `body` (added at the end when absent): how
    the measuring scripts write their part of the file and keep the rest."""
    lines = text.splitlines()
    try:
        start = lines.index(heading)
    except ValueError:
        return text.rstrip("\n") + f"\n\n{heading}\n\n{body.strip()}\n"
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    kept = lines[:start + 1] + ["", body.strip(), ""] + lines[end:]
    return "\n".join(kept).rstrip("\n") + "\n"
