"""`jaxci machine [NAME] [--local] [--list]`: register this machine with asv (jaxci.machines.register)."""

from __future__ import annotations

from jaxci.catalogue import CatalogueError, load_catalogue
from jaxci.commands.argtypes import OneLineParser, refuse
from jaxci.machines.register import default_local_name, register
from jaxci.util.validate import InputError


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="jaxci machine",
                           description="Register this machine with asv under a catalogue name "
                                       "(or a local name).")
    parser.add_argument("name", nargs="?", help="catalogue family (env_matrix/machines.toml), or a local name")
    parser.add_argument("--local", action="store_true",
                        help="register a machine that is not a runner family (results stay git-ignored)")
    parser.add_argument("--machine-file", help="asv machine file (default: ~/.asv-machine.json)")
    parser.add_argument("--list", action="store_true", help="list the catalogue names and exit")
    args = parser.parse_args(argv)
    try:
        if args.list:
            for name, entry in sorted(load_catalogue().items()):
                print(f"{name:14s} {entry.description}")
            return 0
        name = args.name or (default_local_name() if args.local else "")
        if not name:
            parser.error("give a catalogue name, or --local")
        info = register(name, local=args.local, machine_file=args.machine_file)
    except (InputError, CatalogueError) as exc:
        return refuse("jaxci machine", exc)
    print(f"registered asv machine {name!r}: {info['cpu']}, {info['num_cpu']} CPUs, {info['gpu']}, "
          f"backend {info['jaxci_backend']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
