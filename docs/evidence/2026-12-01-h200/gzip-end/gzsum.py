# Summarizes bench-style lines of gz.sh (runs 2-4, 6): medians, ratios to inflate alone, timing medians.
import re,collections,statistics,sys
for fn in sys.argv[1:]:
    print('==',fn)
    d=collections.defaultdict(list); info=collections.defaultdict(list); order=[]
    for l in open(fn):
        m=re.match(r'(\S+) r(\d+) (\S+) wall_ms (\d+)e-3(.*)',l)
        if not m: continue
        f,r,v,w,rest=m.groups(); d[(f,v)].append(int(w)/1000)
        if (f,v) not in order: order.append((f,v))
        g=lambda k: re.search(k+r' ([\d.]+)',rest)
        if 'cutter' in rest:
            vals=[float(g(k).group(1)) if g(k) else -1 for k in ['cutter: begin \S+ end','read','fresh','main: begin \S+ end','parse','join','batches','lib: finished']]
            info[(f,v)].append(vals)
    for (f,v) in order:
        ws=d[(f,v)]; infl=d[(f,'inflate')]
        med=statistics.median(ws); im=statistics.median(infl)
        # paired ratio per round
        pr=[w/i for w,i in zip(ws,infl)]
        s=f"{f:18} {v:10} n={len(ws):2} med {med:6.1f} min {min(ws):6.1f} med/inflmed {med/im:.2f} min/inflmin {min(ws)/min(infl):.2f} paired-med {statistics.median(pr):.2f}"
        if info[(f,v)]:
            cols=list(zip(*info[(f,v)]))
            s+=" | cutEnd %.1f read %.1f fresh %.0f mainEnd %.1f parse %.1f join %.1f batches %.0f fin %.1f" % tuple(statistics.median(c) for c in cols)
        print(s)
