set -x
cd /work/main
export PYTHONPATH=/work/main PYSPARK_PYTHON=/work/main/.venv/bin/python
B=".venv/bin/python -m workloads.bench"
P="--policies lru,crd,crd+norecur --repeat 3 --refs online --no-unlimited"
$B --workloads zip --scale zip=2 --kw zip.rounds=4,zip.prep=50 --cache-fraction 0.5,0.7 $P --out /tmp/s47/ab-zip
$B --workloads tpch --scale tpch=4 --cache-fraction 0.3,0.5,0.7 $P --out /tmp/s47/ab-tpch
# 04:06, 5 more interleaved repeats of tpch at F = 0.5, the two crd variants only
$B --workloads tpch --scale tpch=4 --cache-fraction 0.5 --policies crd,crd+norecur --repeat 5 --refs online --no-unlimited --out /tmp/s47/ab2-tpch
