"""Helpers that know nothing of benchmarks or results: checks of user text (`validate`, with the one
benchmark-filter check), the one git wrapper (`git`), the one pin-file writer (`pins`) and the one
process-tree killer (`proc`). Standard library only; imports nothing else from jaxci but the catalogue's
backend names.
"""
