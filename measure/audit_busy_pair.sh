#!/usr/bin/env bash
# The same fixture lectures audited in two conditions, alternating, to show what a busy or narrower host does to
# the audit's predictions (issue 81, item 3; docs/audit.md, host factor h):
#   bash measure/audit_busy_pair.sh busy    # idle against beside 2 CPU-bound processes it starts itself
#   bash measure/audit_busy_pair.sh cores   # two cores (taskset -c 0,1) against one (taskset -c 0)
# ROUNDS (default 3) rounds of each; prints each run's executed wall time, its wait for a core (the cells'
# wait_s) and its predicted seconds on FAMILY (default g4dn.2xlarge), then the median ratio. Run it alone.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-busy}
case $mode in busy) a=idle; b=busy ;; cores) a=two-cores; b=one-core ;;
  *) echo "audit_busy_pair.sh: $mode: expected busy or cores" >&2; exit 2 ;; esac
out=$(mktemp -d)
for round in $(seq "${ROUNDS:-3}"); do
  for state in "$a" "$b"; do
    spinners=()
    pin=(taskset -c "0,1")
    if [ "$state" = busy ]; then
      for _ in 1 2; do python3 -c "while True: pass" & spinners+=($!); done
      sleep 2
    fi
    [ "$state" = one-core ] && pin=(taskset -c 0)
    "${pin[@]}" .venv/bin/jaxci audit tests/fixtures/lectures/book --execute --platforms cpu --no-ci --no-progress \
      --only f64_scan,grid,large,no_jax,trivial --format json --output "$out/$state-$round.json" > /dev/null
    for p in "${spinners[@]}"; do kill "$p"; done
    sleep 2
  done
done
.venv/bin/python - "$out" "$a" "$b" "${FAMILY:-g4dn.2xlarge}" <<'PY'
import json, pathlib, statistics, sys
out, a, b, family = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rows = {}
for path in sorted(out.glob("*.json")):
    state = path.stem.rsplit("-", 1)[0]
    lectures = json.loads(path.read_text())["lectures"]
    runs = [(lec.get("runs") or {}).get("cpu") or {} for lec in lectures]
    preds = [(lec.get("predicted") or {}).get(family) for lec in lectures]
    wall = sum(r.get("wall_s") or 0 for r in runs)
    waited = sum(c.get("wait_s") or 0 for r in runs for c in r.get("cells", []))
    cpu = sum(p["cpu_s"] for p in preds if p)
    gpu = sum(p["gpu_s"] or 0 for p in preds if p)
    rows.setdefault(state, []).append((wall, cpu, gpu))
    print(f"{path.stem}: wall {wall:.2f} s, waited {waited:.2f} s, predicted on {family}: cpu {cpu:.3f} s, gpu {gpu:.3f} s")
for i, name in ((0, "wall"), (1, "cpu side"), (2, "gpu side")):
    x, y = (statistics.median(r[i] for r in rows[s]) for s in (a, b))
    print(f"{name}: {a} {x:.3f} s, {b} {y:.3f} s: x{y / x:.3f}")
PY
