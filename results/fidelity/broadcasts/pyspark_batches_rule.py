import sys, json, os
sys.path.insert(0,'/work/main')
import lrc.unroll as U, lrc.compiled as C
orig = U.reserve_steps
SMALL = int(os.environ.get('SMALL', '8')); BIG = int(os.environ.get('BIG', str(96*1024)))
def steps_values(size, threshold, values):
    steps, held, cum = [threshold], threshold, 0
    for i, v in enumerate(values):
        cum += v
        if i % 16 == 0 and cum >= held:   # checks after values 1, 17, 33, ...
            held = int(1.5 * cum); steps.append(held)
    if size > held: steps.append(size)
    return tuple(steps)
def patched(size, threshold, elements=None, serialized=False):
    if elements is None and serialized:
        vals, left, b = [], size, 1
        small_total = min(size, 65536)
        # SMALL doubling batches summing to ~64 KiB, then values of BIG bytes
        w = [2**i for i in range(SMALL)]; tot = sum(w)
        vals = [small_total * x / tot for x in w]
        left = size - small_total
        while left > 0:
            vals.append(min(BIG, left)); left -= BIG
        return steps_values(size, threshold, vals)
    return orig(size, threshold, elements, serialized)
U.reserve_steps = patched; C.reserve_steps = patched
sys.argv = [sys.argv[0]] + sys.argv[1:]
exec(open('/work/main/results/fidelity/spark-order/replay_runs.py').read().replace('sys.path.insert(0, str(Path(__file__).resolve().parents[3]))',''))
