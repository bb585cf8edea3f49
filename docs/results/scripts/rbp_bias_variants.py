# Measurement behind docs/results (run from the project root with OKL_DATA=../shared/datasets).
import numpy as np, okl
from okl.kernels import scale_sigma
def rbp(X,y,B,sigma,mode,seed):
    rng=np.random.default_rng(seed); n,d=X.shape
    SV=np.zeros((B,d)); al=np.zeros(B); m=0; b=0.0; err=0
    g=1/(2*sigma**2)
    for t in range(n):
        x=X[t]
        k=np.exp(-g*((SV[:m]-x)**2).sum(1))
        f=al[:m]@k
        if mode=="k+1": f+=al[:m].sum()
        if mode=="bias": f+=b
        yh=1 if f>=0 else -1
        if yh!=y[t]:
            err+=1
            if mode=="bias": b+=y[t]
            r = m if m<B else rng.integers(B)
            if m<B: m+=1
            SV[r]=x; al[r]=y[t]
    return 100*err/n
for ds,rows in [("ijcnn1",30000),("adult",20000),("german",None),("codrna",60000),("svmguide3",None)]:
    X,y=okl.load_dataset(ds); X=np.asarray(X,float); y=np.asarray(y,float)
    p=np.random.default_rng(0).permutation(len(y))[:rows]; X,y=X[p],y[p]
    s=scale_sigma(X[:50]); maj=100*min(np.mean(y>0),np.mean(y<0))
    print(ds, f"maj {maj:.2f}", {mode: round(rbp(X,y,100,s,mode,0),2) for mode in ("none","k+1","bias")}, flush=True)
