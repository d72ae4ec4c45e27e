"""``python -m graphmem``: the ``graphmem`` command."""

from graphmem.cli import main

if __name__ == "__main__":
    main(prog_name="graphmem")
