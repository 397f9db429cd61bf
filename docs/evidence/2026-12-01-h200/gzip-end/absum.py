# Summarizes ab.sh output: medians, paired ratios to inflate alone in the same round, rounds where read-new beat read-old.
import re,collections,statistics,sys
for fn in sys.argv[1:]:
    d=collections.defaultdict(dict)
    for l in open(fn):
        m=re.match(r'(\S+) cpus=(\S+) r(\d+) (\S+) (\d+)',l)
        if m:
            f,c,r,b,us=m.groups(); d[(f,c)].setdefault(b,{})[int(r)]=int(us)/1000
    for (f,c),bs in d.items():
        rounds=sorted(bs['inflate'])
        line=f"{f:18} cpus={c:5} n={len(rounds):2}"
        for b in ['inflate','read-old','read-new']:
            v=[bs[b][r] for r in rounds]
            line+=f" | {b} med {statistics.median(v):6.1f} min {min(v):6.1f}"
        for b in ['read-old','read-new']:
            pr=[bs[b][r]/bs['inflate'][r] for r in rounds]
            line+=f" | {b}/infl paired med {statistics.median(pr):.2f} [{min(pr):.2f}-{max(pr):.2f}] med/med {statistics.median([bs[b][r] for r in rounds])/statistics.median([bs['inflate'][r] for r in rounds]):.2f}"
        nw=sum(bs['read-new'][r]<bs['read-old'][r] for r in rounds)
        line+=f" | new faster in {nw}/{len(rounds)}"
        print(line)
