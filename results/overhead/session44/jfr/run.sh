# Session 44: JFR on the driver and both executors, MLlib scale 8 under pressure (F = 0.5's
# calibration), one overhead round: off, lru, crd, off-b (each a fresh driver). Alone on the machine.
cd "$(git rev-parse --show-toplevel)"
export PYTHONPATH=$PWD PYSPARK_PYTHON=$PWD/.venv/bin/python
rm -rf /tmp/jfr/exec /tmp/jfr/driver; mkdir -p /tmp/jfr/exec /tmp/jfr/driver
J="-XX:StartFlightRecording=settings=profile,dumponexit=true,filename"
date
.venv/bin/python -m workloads.overhead --workload mllib --scale 8 --repeat 1 --variants lru,crd --worker-memory 1g --conf spark.memory.fraction=0.0202 --conf spark.memory.storageFraction=0.1 --conf spark.storage.unrollMemoryThreshold=65536 --conf "spark.executor.extraJavaOptions=$J=/tmp/jfr/exec/" --conf "spark.driver.extraJavaOptions=$J=/tmp/jfr/driver/" --out /tmp/ovh-jfr44
date
ls -la --time-style=full-iso /tmp/jfr/exec /tmp/jfr/driver
