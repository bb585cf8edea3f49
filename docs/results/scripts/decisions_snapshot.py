"""Every decision of the library, for checking that a change keeps them equal (a refactor of the engine
or the components): every stream learner's run() and per-event decisions on german (classification)
and a generated regression stream, auto on CSR rows (dense and sparse pools), K classes on five learners.

usage: python docs/results/scripts/decisions_snapshot.py OUT.npz      (at one commit)
       python docs/results/scripts/decisions_snapshot.py --compare A.npz B.npz   (exit 1 if any differs)"""
import sys, warnings
import numpy as np

def snapshot(out):
    import okl
    import scipy.sparse as sp
    from okl.runtime.multiclass import MultiClass
    warnings.simplefilter("ignore")
    res = {}
    X, y = okl.load_dataset("german")
    pass
    rng = np.random.default_rng(0)
    Xr = rng.normal(size=(800, 5)); yr = np.sin(Xr[:, 0]) + 0.5 * Xr[:, 1] ** 2 + 0.1 * rng.normal(size=800)
    names = [n for n in okl.learners(kind="streaming")]
    for name in names:
        for task, XX, yy, kw in (("clf", X, y, {}), ("reg", Xr, yr, {"loss": "squared"})):
            key = f"{name}|{task}"
            try:
                res[key + "|run"] = np.asarray(okl.make(name, random_state=1, **kw).run(XX, yy).decisions)
            except Exception as e:
                res[key + "|run|err"] = np.array(repr(e)[:200])
            try:
                m = okl.make(name, random_state=1, **kw); d = []
                for i in range(400):
                    d.append(m.predict_one(XX[i])); m.learn_one(XX[i], yy[i])
                res[key + "|event"] = np.asarray(d, dtype=float)
            except Exception as e:
                res[key + "|event|err"] = np.array(repr(e)[:200])
    # auto on CSR (dense pool and sparse pool), K classes
    A = sp.random(300, 200, density=0.03, random_state=3, format="csr"); ya = np.where(np.asarray(A.sum(1)).ravel() > 0.3, 1.0, -1.0)
    res["auto|sparse|run"] = np.asarray(okl.make("auto", random_state=1).run(A, ya).decisions)
    m = okl.make("auto", random_state=1); d = []
    for i in range(150):
        d.append(m.predict_one(A[i])); m.learn_one(A[i], ya[i])
    res["auto|sparse|event"] = np.asarray(d)
    res["auto|csrdense|run"] = np.asarray(okl.make("auto", random_state=1).run(sp.csr_matrix(X), y).decisions)
    Xk = rng.random((300, 3)); lab = np.array(["a", "b", "c", "d"])[np.minimum((Xk[:, 0] + Xk[:, 1]) * 2, 3).astype(int)]
    for name in ("auto", "nogd", "linear", "fogd", "klms"):
        try:
            res[f"{name}|K|run"] = np.nan_to_num(np.asarray(MultiClass(name, {}, random_state=3).run(Xk, lab).decisions), neginf=-1e300)
            loop = MultiClass(name, {}, random_state=3); rows = []
            for x, l in zip(Xk[:150], lab[:150]):
                dd = loop.decision_one(x) if loop.classes_ else np.zeros(0)
                rows.append(np.concatenate([dd, np.full(4 - dd.shape[0], -1e300)])); loop.learn_one(x, l)
            res[f"{name}|K|event"] = np.array(rows)
        except Exception as e:
            res[f"{name}|K|err"] = np.array(repr(e)[:200])
    np.savez(out, **{k.replace("|", "__"): v for k, v in res.items()})
    print(len(res), "arrays;", sum(k.endswith("err") for k in res), "errors")

def compare(a, b):
    A, B = np.load(a), np.load(b)
    bad = 0
    for k in sorted(set(A.files) | set(B.files)):
        if k not in A.files or k not in B.files:
            print("MISSING", k); bad += 1; continue
        if A[k].dtype.kind in "US":
            if A[k] != B[k]: print("ERRDIFF", k, A[k], B[k]); bad += 1
            continue
        if not (A[k].shape == B[k].shape and np.array_equal(A[k], B[k], equal_nan=True)):
            print("DIFF", k, np.nanmax(np.abs(A[k] - B[k])) if A[k].shape == B[k].shape else (A[k].shape, B[k].shape)); bad += 1
    print(f"{len(A.files)} arrays, {bad} differ")
    return bad

if __name__ == "__main__":
    if sys.argv[1] == "--compare":
        sys.exit(1 if compare(sys.argv[2], sys.argv[3]) else 0)
    snapshot(sys.argv[1])
