#!/bin/bash
# A/B: old (b74266a, whole arrays in replies) vs new (284ce53, partition changes), MLlib scale 8,
# crd, under pressure (1g executors, spark.memory.fraction 0.0202), alternating, one run each per round.
cd /tmp/ab45
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for t in $order; do
    TREE=$t EXMEM=1g PYTHONPATH=/tmp/ab45/$t PYSPARK_PYTHON=/work/main/.venv/bin/python \
      timeout 900 /work/main/.venv/bin/python /tmp/ab45/ab.py mllib 8 0.0202 crd 2>>/tmp/ab45/stderr.txt | tail -1 >> /tmp/ab45/runs.txt
  done
done
