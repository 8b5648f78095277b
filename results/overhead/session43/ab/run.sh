# Session 43: the table_applied event carried by the executor's next table request (new) or sent
# as a message of its own (old, 10afaf1), crd under memory pressure, MLlib scale 2; old and new
# alternated, 3 rounds, each an overhead invocation (off, crd, off-b). Alone on the machine.
#   git worktree add /tmp/old 10afaf1
export PYSPARK_PYTHON=/work/main/.venv/bin/python
for round in 1 2 3; do
for tree in old new; do
  root=/work/main; [ $tree = old ] && root=/tmp/old
  date
  (cd $root && PYTHONPATH=$root /work/main/.venv/bin/python -m workloads.overhead --workload mllib --scale 2 --repeat 1 --variants crd --worker-memory 1g --conf spark.memory.fraction=0.006 --conf spark.memory.storageFraction=0.1 --conf spark.storage.unrollMemoryThreshold=65536 --out /tmp/s43/ab/$tree-$round)
done
done
date
