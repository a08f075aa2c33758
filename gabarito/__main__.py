"""``python -m gabarito`` is the ``gabarito`` command."""

from gabarito.cli import entry

if __name__ == "__main__":
    raise SystemExit(entry())
