export PYSPARK_PYTHON=/work/main/.venv/bin/python
cd /work/main
for round in 1 2 3; do
for tree in old new; do
  root=/work/main; [ $tree = old ] && root=/tmp/old
  date
  (cd $root && PYTHONPATH=$root /work/main/.venv/bin/python -m workloads.overhead --workload mllib --scale 2 --repeat 1 --variants lru,crd --out /tmp/s42/ab-$tree-$round)
done
done
date
