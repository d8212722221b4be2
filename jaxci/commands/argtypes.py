"""argparse types shared by the commands: numbers as the command line takes them, in ASCII digits only (`int()`
and `float()` also read other scripts' digits: "٢" would be 2, "６０" 60), as docs/bad-input.md says."""

from __future__ import annotations

import argparse
import re
import sys

from jaxci.util.validate import quoted

#: a whole number: an optional sign and ASCII digits (a 400-digit one reaches the command's range check)
_INTEGER = re.compile(r"[+-]?[0-9]{1,4000}", re.ASCII)
#: a number: an optional sign, fraction and exponent, or inf / nan (refused later where a range applies)
_REAL = re.compile(r"[+-]?([0-9]{1,30}([.][0-9]{0,30})?|[.][0-9]{1,30})([eE][+-]?[0-9]{1,4})?|[+-]?(inf|nan)",
                   re.ASCII | re.IGNORECASE)


def ascii_int(text: str) -> int:
    """argparse `type` for a whole number written in ASCII digits."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{quoted(text, 40)}: expected a whole number in ASCII digits (0-9)")
    return int(text)


def ascii_float(text: str) -> float:
    """argparse `type` for a number written in ASCII digits (a sign, a fraction and an exponent allowed)."""
    if not isinstance(text, str) or not _REAL.fullmatch(text):
        raise argparse.ArgumentTypeError(f"{quoted(text, 40)}: expected a number in ASCII digits (0-9)")
    return float(text)


def positive_float(text: str) -> float:
    """argparse `type` for a finite number above zero, in ASCII digits."""
    import math

    value = ascii_float(text)
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{quoted(text, 40)}: expected a finite number above zero")
    return value


class OneLineParser(argparse.ArgumentParser):
    """argparse's parser whose refusals are one line (`jaxci X: error: ...`, exit 2), as every other refusal of
    the command line is; `--help` still prints the usage."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


def refuse(prog: str, message: object) -> int:
    """Print the one line `PROG: MESSAGE` on stderr; the exit status of a refusal, 2."""
    print(f"{prog}: {message}", file=sys.stderr)
    return 2
