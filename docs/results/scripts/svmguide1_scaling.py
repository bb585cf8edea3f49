# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
import numpy as np, gzip
from sklearn.datasets import load_svmlight_files
from okl.evolvable.harness import evaluate, tune_hyperparameters
from okl.data import load_dataset
import os
D=os.path.join(os.environ.get("OKL_DATA", "../shared/datasets"), "libsvm") + "/"
Xa, ya, Xb, yb = load_svmlight_files([gzip.open(D+"svmguide1.gz"), gzip.open(D+"svmguide1.t.gz")], n_features=4)
Xraw = np.vstack([Xa.toarray(), Xb.toarray()]); yraw = np.where(np.concatenate([ya, yb]) > 0, 1.0, -1.0)
Xs, ys = load_dataset("svmguide1")
print("raw ranges", Xraw.min(0), Xraw.max(0), "labels equal:", np.array_equal(ys, yraw))
learners = ("opfes","rff-rogd","lin-rogd","ker-rogd")
for tag, X, y in (("scaled [0,1] (ours)", np.asarray(Xs,float), ys), ("raw LIBSVM (unscaled)", Xraw, yraw)):
    tuned = tune_hyperparameters(X, y, n_features=1000, seeds=(10_000, 10_001))
    run = evaluate(X, y, learners, runs=2, dataset="svmguide1", tuned=tuned)
    print(tag, {l: tuple(round(v,4) for v in run.mean_std(l)) for l in learners}, "tuned sigma", tuned["sigma"], flush=True)
