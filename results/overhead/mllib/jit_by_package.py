"""JIT work by package, from HotSpot's compilation logs (analysis.md section 6).

    python jit_by_package.py driver LOG...   # -XX:+PrintCompilation output: compiles per tier
    python jit_by_package.py exec LOG...     # -XX:+LogCompilation files: compile seconds

`exec` works on any JVM's LogCompilation file (driver or executor): per package, the seconds
from each <task ... stamp> to its <task_done stamp> (elapsed time in the compiler thread, which
a loaded machine stretches) and the number of compiles."""
import re, sys, collections

def pkg(cls):
    cls = cls.replace('/', '.')
    for p in ('org.sparklrc', 'com.fasterxml.jackson', 'org.apache.spark.sql.catalyst.expressions.GeneratedClass',
              'org.apache.spark.sql', 'org.apache.spark.ml', 'org.apache.spark.mllib', 'org.apache.spark.storage',
              'org.apache.spark.scheduler', 'org.apache.spark', 'scala.', 'java.', 'jdk.', 'sun.', 'py4j', 'io.netty',
              'org.codehaus.janino', 'breeze', 'com.esotericsoftware', 'org.apache.arrow'):
        if cls.startswith(p):
            return p
    return 'other:' + '.'.join(cls.split('.')[:2])

def driver(path):
    by = collections.Counter()
    rx = re.compile(r'\s([0-4])\s+([\w$./]+)::')
    for line in open(path, errors='replace'):
        if 'made not entrant' in line or 'made zombie' in line:
            continue
        m = rx.search(line)
        if m:
            by[(int(m.group(1)), pkg(m.group(2)))] += 1
    return by

def executor(path):
    dur = collections.Counter(); n = collections.Counter()
    cur = None
    rx_task = re.compile(r"<task compile_id='(\d+)'(?: compile_kind='\w+')? method='([^ ']+)[^']*'.*?stamp='([\d.]+)'")
    rx_done = re.compile(r"<task_done .*?stamp='([\d.]+)'")
    for line in open(path, errors='replace'):
        if line.startswith('<task '):
            m = rx_task.search(line)
            cur = (pkg(m.group(2)), float(m.group(3))) if m else None
        elif line.startswith('<task_done') and cur:
            m = rx_done.search(line)
            if m:
                dur[cur[0]] += float(m.group(1)) - cur[1]; n[cur[0]] += 1
            cur = None
    return dur, n

if __name__ == '__main__':
    kind = sys.argv[1]
    if kind == 'driver':
        for p in sys.argv[2:]:
            by = driver(p)
            tot = collections.Counter()
            for (tier, k), v in by.items():
                tot[k] += v
            print(p, 'compiles', sum(by.values()), 'C2', sum(v for (t, _), v in by.items() if t == 4))
            for k, v in tot.most_common(14):
                print(f'   {k:55s} {v:6d}  C2 {by[(4, k)]:5d}')
    else:
        for p in sys.argv[2:]:
            dur, n = executor(p)
            print(p, 'compile s', round(sum(dur.values()), 1), 'tasks', sum(n.values()))
            for k, v in dur.most_common(12):
                print(f'   {k:55s} {v:7.2f} s  {n[k]:6d}')
