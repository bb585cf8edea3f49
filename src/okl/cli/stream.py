"""``okl stream``: learn from an event stream (a file, a followed file or stdin) with checkpoints.

The runner is library code (:mod:`okl.stream`). Its argparse parser still lives there too
(``okl.stream.add_stream_parser``, shared with ``python -m okl.stream``); moving it here is a
later step of issue 14.
"""

from __future__ import annotations

from okl.stream import add_stream_parser


def add_parser(sub):
    return add_stream_parser(sub)
