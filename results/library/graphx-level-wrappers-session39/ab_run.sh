#!/bin/bash
# old (ba5d309) and new (a802f31) alternated, one bench run each, alone on the machine
cd /tmp/ab39
for r in 1 2 3 4; do
  for t in old new; do
    if [ $t = old ]; then root=/tmp/old; else root=/work/main; fi
    (cd $root && PYTHONPATH=$root timeout 900 /work/main/.venv/bin/python -m workloads.bench --workloads graphx_pagerank --policies crd --cache-fraction 0.5 --repeat 1 --no-unlimited --no-sim --run-timeout 600 --out /tmp/ab39/$t-$r > /tmp/ab39/$t-$r.log 2>&1)
  done
done
touch /tmp/ab39/DONE
