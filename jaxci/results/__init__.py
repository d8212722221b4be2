"""asv results in and out: `records` is the one adapter of asv's result format (result files, machine.json,
benchmarks.json; every other module reads them through it); `importer` merges a capture; `history`
backfills JAX releases; `upgrade` compares two pins; `asvrun` runs asv.

May import the runtime (catalogue), machines and util; never analysis, report or commands.
"""
