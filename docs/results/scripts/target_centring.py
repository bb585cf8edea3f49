"""Regression cells of the defaults matrix (cpusmall, cadata, parkinson: 3 permutations) and River's
regression streams, with the okl found on PYTHONPATH; one JSON line per cell."""
import json, sys, warnings
import numpy as np
import okl
from okl.data.registry import load_dataset, permutation
from okl.experiments import defaults, river_streams
warnings.filterwarnings("ignore")
out = open(sys.argv[1], "w")
which = sys.argv[2] if len(sys.argv) > 2 else "all"
if which in ("all", "defaults"):
    learners = [n for n in okl.learners(kind="streaming") if n not in ("bpa-s", "forgetron", "projectron", "projectron++", "rbp")]
    for d in ("cpusmall", "cadata", "parkinson"):
        X, y = load_dataset(d, None)
        for n in learners:
            vals = []
            for seed in range(3):
                order = permutation(len(y), seed)
                rec = defaults._cell(n, X[order], y[order], "regression", seed)
                vals.append(rec["metric"])
            out.write(json.dumps({"set": d, "learner": n, "metric": vals}) + "\n"); out.flush()
if which in ("all", "river"):
    streams = river_streams._streams(1, 2000)  # stream seed 1, first 2,000 events (okl seeded 0)
    for s in ("TrumpApproval", "ChickWeights", "Friedman", "FriedmanDrift"):
        st = streams[s]
        ev = st.make()
        for n in ("auto", "nogd", "forks", "fogd", "linear"):
            rec = river_streams._cell("okl " + n, st.task, ev, seed=1)
            out.write(json.dumps({"set": s, "learner": n, "metric": [rec["metric"]]}) + "\n"); out.flush()
