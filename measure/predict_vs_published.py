"""Hold the runner model against every published figure of docs/reference/incidents.md.

    .venv/bin/python measure/predict_vs_published.py [RESULTS_DIR] [--format text|json]

RESULTS_DIR defaults to results/. For every figure: case, family, device, published_s, predicted_s, low_s,
high_s, ratio (predicted / published), and in text form why the model cannot predict where it cannot.
`--format json` prints one object per figure with exactly those eight keys. The figures check the model; they
never enter it (the model is built from RESULTS_DIR and env_matrix/machines.toml before the file is read).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KEYS = ("case", "family", "device", "published_s", "predicted_s", "low_s", "high_s", "ratio")


def rows(results_dir: Path, incidents: Path) -> list[dict]:
    from jaxci.analysis.model import RunnerModel
    from jaxci.catalogue import load_catalogue
    from jaxci.report.published import check, figures
    from jaxci.results.records import load_results

    rs = load_results(results_dir)
    model = RunnerModel.from_results(rs.latest(), rs.machines, load_catalogue(include_lab=True))
    return check(figures(incidents.read_text()), model)


def summary(out: list[dict]) -> str:
    """Counts: predicted, within 2x of the printed value, within 2x of its rounding interval (value +- half a unit
    of its last digit)."""
    hit = [r for r in out if r["ratio"] is not None]
    within = sum(0.5 <= r["ratio"] <= 2.0 for r in hit)
    within_iv = sum(0.5 <= r["ratio_interval"] <= 2.0 for r in hit)
    n = sum(r["predicted_s"] is not None for r in out)
    return (f"{n} of {len(out)} published figures predicted, {len(hit)} with a ratio: {within} within 2x of the "
            f"printed value, {within_iv} within 2x of its rounding interval")


def _s(x) -> str:
    if x is None:
        return "—"
    return f"{x:.3g}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results_dir", nargs="?", default=str(ROOT / "results"))
    ap.add_argument("--incidents", default=str(ROOT / "docs" / "reference" / "incidents.md"))
    ap.add_argument("--format", choices=("text", "json"), default="text")
    args = ap.parse_args(argv)
    out = rows(Path(args.results_dir), Path(args.incidents))
    if args.format == "json":
        print(json.dumps([{k: r[k] for k in KEYS} for r in out], indent=1))
        return 0
    print("| case | family | device | published_s | predicted_s | low_s | high_s | ratio | ratio to published "
          "interval | why not / verdict |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in out:
        note = r["why"] if r["predicted_s"] is None else r["verdict"]
        print(f"| {r['case']} | {r['family']} | {r['device']} | {_s(r['published_s'])} | {_s(r['predicted_s'])} | "
              f"{_s(r['low_s'])} | {_s(r['high_s'])} | {_s(r['ratio'])} | {_s(r['ratio_interval'])} | {note} |")
    print("\n" + summary(out) + f" (results: {args.results_dir})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
