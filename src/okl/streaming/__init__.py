"""The pieces of ``okl stream`` below the runner (:mod:`okl.stream`): event parsing and file
tailing (:mod:`okl.streaming.events`) and checkpoints (:mod:`okl.streaming.checkpoint`)."""
