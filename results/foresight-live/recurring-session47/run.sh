set -x
cd /work/main
export PYTHONPATH=/work/main PYSPARK_PYTHON=/work/main/.venv/bin/python
B=".venv/bin/python -m workloads.bench"
P="--policies lru,crd,crd+norecur --repeat 3 --refs online --no-unlimited"
$B --workloads zip --scale zip=2 --kw zip.rounds=4,zip.prep=50 --cache-fraction 0.5,0.7 $P --out /tmp/s47/ab-zip
$B --workloads tpch --scale tpch=4 --cache-fraction 0.3,0.5,0.7 $P --out /tmp/s47/ab-tpch
