"""One module per `jaxci` command: parse the arguments, call the library, print, return the exit code.

Owns: argparse, what is printed, exit codes. May import anything in jaxci; nothing outside this package
imports it (but jaxci.cli, which loads a command only when it runs, so `jaxci env` stays light).
"""
