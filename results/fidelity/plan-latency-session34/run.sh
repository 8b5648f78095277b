#!/usr/bin/env bash
# plan latency on local-cluster[2,1,1024], old brain (BASE) and new (NEW) alternated, fresh driver each
for round in 1 2 3 4; do for t in $BASE $NEW; do
  tag=$(basename $t)
  (cd $t && PYTHONPATH=$t $NEW/.venv/bin/python -m workloads.plan_latency --runs 1 --kw iterations=10 > /tmp/pl/$tag.$round.json 2> /tmp/pl/$tag.$round.err)
  echo "$(date +%T) $tag round $round rc $?"
done; done
