"""One module per `jaxci` command: parse the arguments, call the library, print, return the exit code.

Owns: argparse, what is printed, exit codes. May import anything in jaxci; nothing outside this package
imports it (but jaxci.cli, which loads a command only when it runs, so `jaxci env` stays light). One module is
asv's entry point, not a command: `asv_findings`, the publisher plugin asv.conf.json names, through which
`asv publish` writes the findings page (`report.write_site`).
"""
