"""Reading lectures without running them: which files are lectures (`discovery`), one notebook file
(`notebook`: .ipynb or MyST through jupytext), the book's configuration (`book`, `yamlread`), and the static scan
of each lecture (`static` over `markdown`, `visitor`, `shapes`, `sizes`, `pins`, into a `scanrecord.LectureScan`),
and a run record read back from a file, checked field by field (`runrecord`: the run cache, a baseline, an audit).

May import: jaxci.util only. Nothing here starts a kernel, imports JAX or judges a lecture.
"""
