#!/usr/bin/env bash
# Session 34: plan-speed, old brain (BASE: a worktree of e18fc99 with this commit's plan_speed.py,
# gcpause.py and scale.py copied in, so both are timed by the same code) and new brain (NEW),
# alternated: 5 rounds x 4 policies, each cell the median of 5 fresh brains. Alone on the machine.
#   git worktree add /tmp/base e18fc99 && cp spark_plugin/{plan_speed,gcpause,scale}.py /tmp/base/spark_plugin/
#   BASE=/tmp/base NEW=$PWD bash results/fidelity/plan-speed-session34/run.sh > runs.txt
#   python3 results/fidelity/plan-speed-session34/summary.py runs.txt
for round in 1 2 3 4 5; do for t in $BASE $NEW; do for p in lrc lerc mrd crd; do
 (cd $t && $NEW/.venv/bin/python -m spark_plugin plan-speed --stages 1000 --parts 10 --repeat 5 --policy $p | python3 -c "import json,sys; d=json.load(sys.stdin); print('$t $p', ' '.join(f'{k}={d[k][\"median\"]}' for k in ('decode_ms','add_job_ms','publish_ms','planning_ms','step_ms','next_job_ms')))")
done; done; done
