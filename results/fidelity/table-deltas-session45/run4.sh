#!/bin/bash
# A/B: old (26d7330: executors' table_applied reports wake the brain) vs new (cb25531: they go with
# its next drain), MLlib scale 8, crd, under pressure (1g executors, spark.memory.fraction 0.0202), alternating.
cd /tmp/ab45
for r in 1 2 3; do
  if [ $((r % 2)) = 1 ]; then order="old new"; else order="new old"; fi
  for t in $order; do
    TREE=$t EXMEM=1g PYTHONPATH=/tmp/ab45/$t PYSPARK_PYTHON=/work/main/.venv/bin/python \
      timeout 900 /work/main/.venv/bin/python /tmp/ab45/ab2.py mllib 8 0.0202 crd 2>>/tmp/ab45/stderr.txt | tail -1 >> /tmp/ab45/runs-lazy.txt
  done
done
