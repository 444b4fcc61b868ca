#!/usr/bin/env python3
"""Per step, the paired ratio of each variant against the base variant of a matrix output dir:
the geometric mean of the per-round throughput ratios and the standard error of the mean log
ratio (bench/size-commit-delay.toml).  Usage: bench/paired-ratios.py MATRIX_OUT BASE_VARIANT"""
import json,glob,math,sys
out=sys.argv[1]; base=sys.argv[2]
d={}
for f in sorted(glob.glob(out+'/cells/*/run/run.json')):
    r=json.load(open(f)); c=f.split('/')[-3]; v=c.split('.')[1]; rd=c.split('.')[3]; wl=c.split('.')[2]
    for s in r['steps']:
        d.setdefault((wl+':'+s['name'],v),{})[rd]=(s['throughput'], s['seconds'])
steps=sorted({k[0] for k in d}); vs=sorted({k[1] for k in d})
for st in steps:
    for v in vs:
        print(st,v,{k:(round(x[0]),round(x[1],1)) for k,x in sorted(d[(st,v)].items())})
    for v in vs:
        if v==base: continue
        rs=[math.log(d[(st,v)][r][0]/d[(st,base)][r][0]) for r in sorted(d[(st,v)])]
        m=sum(rs)/len(rs); sd=(sum((x-m)**2 for x in rs)/(len(rs)-1))**.5
        print(' ',v,'paired mean ratio',round(math.exp(m),3),'se',round(sd/len(rs)**.5,3), 'n',len(rs))
