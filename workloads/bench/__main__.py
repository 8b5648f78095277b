"""`python -m workloads.bench`: run the benchmark, or only re-render (`--render DIR`), merge a
re-run into a benchmark (`--merge DIR SRC`) or replay its recorded traces again (`--resim DIR W`)."""
from __future__ import annotations

import sys

from workloads.bench.cli import parse_conf, parser, settings
from workloads.bench.merge import merge
from workloads.bench.replay import resim
from workloads.bench.report import render
from workloads.bench.runner import Bench, RunFailed
from workloads.bench.target import open_target


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    a = parser().parse_args(argv)
    if a.render:
        print(render(a.render))
        return 0
    if a.merge:
        print(merge(*a.merge))
        return 0
    if a.resim:
        print(resim(*a.resim))
        return 0
    s = settings(a)
    try:
        with open_target(a.master, a.workers, a.worker_memory, a.executor_memory,
                         parse_conf(a.conf)) as target:
            return Bench(s, target, argv).run()
    except RunFailed as e:
        print(f"benchmark aborted: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; partial results (if any) were written", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
