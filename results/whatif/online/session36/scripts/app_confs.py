import json, sys, glob
import lrc.eventlog_files as F
for d in sorted(glob.glob(sys.argv[1] + "/*")):
    props = {}
    for f, n, line, ok in F.lines(F.eventlog_files(d), print):
        if b"EnvironmentUpdate" in line[:80]:
            e = json.loads(line); props = e.get("Spark Properties", {}); break
    print(d.rsplit("-", 1)[1], props.get("spark.memory.fraction"), props.get("spark.lrc.policy"), props.get("spark.plugins", "")[:20])
