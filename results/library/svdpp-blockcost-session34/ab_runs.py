import json, statistics, sys
d=json.load(open(sys.argv[1])); a_pol, b_pol = sys.argv[2], sys.argv[3]
runs=d if isinstance(d,list) else d['runs']
by={}
for r in runs:
    if isinstance(r,dict) and r.get('policy') in (a_pol,b_pol):
        by.setdefault((r['cache_fraction'], r['repeat']),{})[r['policy']]=r
rat=[]
for k in sorted(by):
    a,b=by[k][a_pol],by[k][b_pol]
    rat.append(b['jct_s']/a['jct_s'])
    print(k, f"{a_pol} {a['jct_s']:.1f} hit {a['hit_ratio']:.3f} ok {a['checksum_ok']} | {b_pol} {b['jct_s']:.1f} hit {b['hit_ratio']:.3f} ok {b['checksum_ok']} | {b_pol}/{a_pol} {rat[-1]:.2f}")
print(f"median {b_pol}/{a_pol}", round(statistics.median(rat),3), f"[{min(rat):.2f}-{max(rat):.2f}]", f"{a_pol} faster in", sum(x>1 for x in rat), "of", len(rat))
