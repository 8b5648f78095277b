set -x
cd /work/main
export PYTHONPATH=/work/main PYSPARK_PYTHON=/work/main/.venv/bin/python
E="--policies plain --cache-fraction 0.5 --repeat 1 --no-unlimited --no-sim --refs online"
B=".venv/bin/python -m workloads.bench"
$B --workloads pagerank --scale pagerank=2 --kw pagerank.iterations=5,pagerank.prep=50 $E --out /tmp/s47/cal-pagerank
$B --workloads cc --scale cc=1 --kw cc.prep=50 $E --out /tmp/s47/cal-cc
$B --workloads ml $E --out /tmp/s47/cal-ml
$B --workloads tpch --scale tpch=4 $E --out /tmp/s47/cal-tpch
$B --workloads sql $E --out /tmp/s47/cal-sql
