"""Reading lectures without running them: which files are lectures (`discovery`), one notebook file
(`notebook`: .ipynb or MyST through jupytext), the book's configuration (`book`, `yamlread`), and the static scan
of each lecture (`static` over `markdown`, `visitor`, `shapes`, `sizes`, `pins`, into a `scanrecord.LectureScan`),
and a run record read back from a file, checked field by field (`runrecord`: the run cache, a baseline, an audit),
with the records of its loops and jitted calls (`cell_records`: the kernel-side hooks write them, the judging reads
them).

May import: jaxci.util only. Nothing here starts a kernel, imports JAX or judges a lecture.
"""
