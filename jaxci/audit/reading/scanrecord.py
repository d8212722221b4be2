"""The record of one lecture's static scan (`LectureScan`): what static.py's cell loop and the visitor fill in,
and what classify, the reports and the JSON output read. Its own module so that the visitor can name it without
importing the scan's entry points (static.py imports the visitor)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from jaxci.audit.reading.pins import Pin
from jaxci.audit.reading.sizes import Loop, SizeFinding


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
    pins: list[Pin] = field(default_factory=list)  # every setting that chooses JAX's platform
    gpu_narrative: list[str] = field(default_factory=list)  # what the text says or shows of the GPU (for review)
    #: the gpu_narrative entries that show the backend (a device list displayed or printed, nvidia-smi, a GPU
    #: directive or include): what keeps a trivial lecture on the GPU; prose about GPU speed is not among them
    gpu_shown: list[str] = field(default_factory=list)
    max_elements: int | None = None
    grid: bool = False  # meshgrid / vmap over a grid seen
    x64_cell: int | None = None  # the first cell where float64 is switched on (earlier cells run float32)
    timeout_override: float | None = None  # the notebook's own per-cell timeout (None: none, or no limit)
    timeout_origin: str = ""  # where the notebook's metadata sets it ("": it does not)
    loops: list[Loop] = field(default_factory=list)  # every long or unknown-length loop, with carry and trips
    size_findings: list[SizeFinding] = field(default_factory=list)  # sizes with their evidence chain
    imports: list[str] = field(default_factory=list)  # top-level modules imported
    notes: list[str] = field(default_factory=list)  # tolerated: raises-exception / skip-execution cells

    def add_gpu_display(self, entry: str) -> None:
        """Code that shows the GPU backend to the reader: narrative to review, and what keeps the lecture on it."""
        self.gpu_narrative.append(entry)
        self.gpu_shown.append(entry)

    @property
    def pinned_cpu(self) -> bool:
        return self.cpu_pin is not None

    @property
    def cpu_pin(self) -> Pin | None:
        """The first setting whose first platform is the CPU."""
        return next((p for p in self.pins if p.pinned_cpu), None)

    @property
    def device_pins(self) -> list[str]:
        """The pins as the report shows them ("cell N: JAX_PLATFORMS=cpu")."""
        return [p.text() for p in self.pins]

    @property
    def sizes(self) -> list[str]:
        """The sizes as the report shows them ("cell N: zeros[1000] = 1,000 elements")."""
        return [f.short() for f in self.size_findings]

    def as_dict(self) -> dict:
        out = asdict(self)
        out["pins"] = [p.as_dict() for p in self.pins]
        return {**out, "device_pins": self.device_pins, "sizes": self.sizes, "pinned_cpu": self.pinned_cpu}
