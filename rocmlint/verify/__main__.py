"""``python -m rocmlint.verify``: verify without the main CLI (adds --output-format/--config)."""
import argparse
import sys

from . import cli


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="rocmlint verify")
    cli.add_arguments(parser)
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument("--config", default=None)
    return cli.run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
