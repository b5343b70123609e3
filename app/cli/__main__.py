"""``python -m app.cli``: the same entry point as the ``fincap`` script."""

from app.cli.root import main

if __name__ == "__main__":
    main()
