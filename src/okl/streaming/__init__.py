"""``okl stream``: the entry point (:mod:`okl.streaming.main`) over the runner
(:mod:`okl.streaming.runner`, which documents what the stream does), over event-line parsing and
input reading/tailing (:mod:`okl.streaming.lines`) and checkpoints (:mod:`okl.streaming.checkpoint`)."""
