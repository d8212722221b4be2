"""The first part of guidance.md: what a lecture author needs, in plain words, with short examples of our own.

No benchmark ids, bands or model names here (those stay in the evidence below it); no figures either, so nothing
in this part can drift from the report data.
"""

from __future__ import annotations

from jaxci.audit.writing.emit import KERNEL

_FRONT_MATTER = f"""```yaml
---
kernelspec:
  name: {KERNEL}
  display_name: Python 3 (JAX on CPU)
  language: python
---
```"""

_NOTEBOOK_METADATA = f"""```json
"metadata": {{"kernelspec": {{"name": "{KERNEL}", "display_name": "Python 3 (JAX on CPU)", "language": "python"}}}}
```"""

_JIT_LOOP = """```python
@jax.jit
def simulate(x0, shocks):
    def step(x, e):
        x = 0.9 * x + e
        return x, x
    _, path = jax.lax.scan(step, x0, shocks)
    return path
```"""

_NUTS = """```python
import os
warmup = 200 if os.environ.get("CI") else 1000
mcmc = MCMC(NUTS(model), num_warmup=warmup, num_samples=warmup)
```"""

_F32 = """```python
# leave jax_enable_x64 off unless the lecture needs the precision
grid = jnp.linspace(0.0, 1.0, 500, dtype=jnp.float32)
```"""


def sections() -> list[str]:
    """The author's page as Markdown lines: when the GPU helps, when and how to pin, and the CI-safe idioms."""
    return [
        "## When the GPU helps", "",
        "The GPU pays off when each step works on large arrays: hundreds of thousands of numbers or more, a big "
        "matrix product, a simulation over many agents at once. It does not pay off for small models: a loop over a "
        "handful of numbers, a short scalar recursion, a small NUTS model. There every step is a tiny piece of work "
        "and the GPU spends more time starting it than doing it, so the CPU finishes first.", "",
        "## When to pin a lecture to the CPU", "",
        "Pin a lecture when its arrays stay small, when it loops step by step over a few numbers, when it samples a "
        "small model with NUTS, or when it needs float64 throughout (most CI GPUs are slow in float64). "
        "`jaxci audit` lists the lectures it would pin for your build machine; follow that list.", "",
        "## How to pin one lecture", "",
        f"Give the lecture its own Jupyter kernel, `{KERNEL}`, a kernel that runs JAX on the CPU. Only that lecture "
        "changes; every other lecture keeps the GPU. Do not set the CPU for the whole build job: that takes the GPU "
        "from the lectures that need it. In a MyST Markdown lecture, put this in the front matter:", "",
        _FRONT_MATTER, "",
        "In a notebook (.ipynb), put this in the notebook's metadata:", "",
        _NOTEBOOK_METADATA, "",
        "`jaxci audit LECTURE_REPO --machine FAMILY --emit-config FILE` writes the kernel and these settings for "
        "you, and the build step that installs the kernel.", "",
        "## Habits that keep small models safe in CI", "",
        "- **Compile the whole loop, not one step.** Calling a compiled step from a Python loop pays the start-up "
        "cost every time round; compile the function that holds the loop.",
        "- **Use `lax.scan` instead of a Python loop.** It runs the loop inside one compiled call:", "",
        _JIT_LOOP, "",
        "- **Use float32 where it is fine.** Switch on float64 only in lectures that need it, and pin those to the "
        "CPU:", "",
        _F32, "",
        "- **Fewer NUTS warmup steps in CI.** The published page can use the full count; the CI check only needs the "
        "lecture to run:", "",
        _NUTS, "",
        "- **Turn off memory preallocation when lectures share a GPU.** JAX takes most of the GPU's memory when it "
        "starts; with several notebooks at once the last one cannot get any. Set "
        "`XLA_PYTHON_CLIENT_PREALLOCATE=false` in the build's environment (the jax-env action does this).", "",
    ]
