"""Run one benchmark workload with the in-process brain and record every batch of events it drains.

    python results/overhead/mllib/capture.py SPEC.json EVENTS.jsonl OUT.json

SPEC is a `workloads.bench.child` spec (see that module); each line of EVENTS is one drained
batch (a JSON list of event lines). `replay.py` feeds them to a Brain under cProfile.
"""
import json
import sys

from spark_plugin import bridge

_drain = bridge.JvmBridge.drain


def main() -> int:
    spec, events, out = sys.argv[1:4]
    sink = open(events, "w")

    def recording_drain(self, *args, **kwargs):
        lines = _drain(self, *args, **kwargs)
        if lines:
            sink.write(json.dumps(lines) + "\n")
            sink.flush()
        return lines

    bridge.JvmBridge.drain = recording_drain
    from workloads.bench import child
    return child.main([spec, out])


if __name__ == "__main__":
    sys.exit(main())
