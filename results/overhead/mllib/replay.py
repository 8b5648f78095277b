"""Apply a recorded event stream (`capture.py`) to a Brain whose bridge only hands out the
recorded batches and counts publishes, under cProfile: the brain's CPU for the events alone,
without py4j.

    python results/overhead/mllib/replay.py EVENTS.jsonl POLICY
"""
import cProfile
import json
import pstats
import sys
import time

from spark_plugin.brain import Brain
from spark_plugin.config import LrcSettings


class RecordedBridge:
    def __init__(self, batches):
        self.batches, self.published = batches, 0

    def drain(self, max_events=10_000, wait_ms=0, linger_ms=0):
        return self.batches.pop(0) if self.batches else []

    def publish(self, version, arrays, stages, moves=None):
        self.published += 1

    def dropped(self):
        return 0

    def describe_stages(self, ids):
        return ""

    def attach_brain(self): pass
    def detach_brain(self): pass
    def report_metrics(self, lines): pass
    def post_summary(self, stats): pass


def main() -> None:
    batches = [json.loads(line) for line in open(sys.argv[1])]
    policy = sys.argv[2]
    bridge = RecordedBridge(list(batches))
    brain = Brain(bridge, LrcSettings.from_conf({"spark.lrc.policy": policy}))
    prof = cProfile.Profile()
    t0 = time.process_time()
    prof.enable()
    while brain.step():
        pass
    prof.disable()
    print(f"{policy}: {sum(map(len, batches))} events in {len(batches)} batches, "
          f"CPU {time.process_time() - t0:.2f} s (with cProfile), {bridge.published} publishes")
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
