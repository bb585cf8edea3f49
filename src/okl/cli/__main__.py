"""``python -m okl.cli ...`` (the same as ``okl ...``)."""

from okl.cli import main

raise SystemExit(main())
