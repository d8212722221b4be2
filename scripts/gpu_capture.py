"""GPU capture (jaxci.capture, docs/gpu-capture.md): `python3 scripts/gpu_capture.py --help`."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's jaxci: the lent machine has none
from jaxci.commands.capture import main  # noqa: E402

raise SystemExit(main())
