# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
import sys, numpy as np, okl
from okl.kernels import scale_sigma
sets = {"codrna":60000, "adult":20000, "ijcnn1":30000, "german":None, "svmguide3":None, "spambase":None}
names = sys.argv[1].split(",")
mults = [0.5,1,2,4]
for ds, rows in sets.items():
    X, y = okl.load_dataset(ds); X=np.asarray(X,float); y=np.asarray(y,float)
    maj = 100*min(np.mean(y>0), np.mean(y<0))
    for name in names:
        res=[]
        for mlt in mults:
            vals=[]
            for seed in range(2):
                p = np.random.default_rng(seed).permutation(len(y))[:rows]
                s = scale_sigma(X[p[:50]])*mlt
                f = np.asarray(okl.make(name, random_state=seed, kernel=okl.RBF(sigma=s)).run(X[p], y[p]).decisions)
                vals.append(100*np.mean(np.where(f>=0,1,-1)!=y[p]))
            res.append(np.mean(vals))
        print(ds, f"maj {maj:.2f}", name, " ".join(f"x{m}:{r:.2f}" for m,r in zip(mults,res)), flush=True)
