"""`python -m jvm_shim build|jar|bench|bench-replies`."""
from __future__ import annotations

import argparse
import sys

from .build import ShimBuildError, build, jar_path, run_bench


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m jvm_shim", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="compile the shim jar (cached by source hash + Spark version)")
    b.add_argument("--force", action="store_true", help="rebuild even if cached")
    sub.add_parser("jar", help="print the jar path, building it if needed")
    be = sub.add_parser("bench", help="eviction-decision microbenchmark (Markdown table)")
    be.add_argument("sizes", nargs="*", type=int, help="cached block counts (default 1k 10k 100k)")
    br = sub.add_parser("bench-replies", help="what a table version costs an executor: reply "
                        "size, decode + apply, partition changes vs whole arrays")
    br.add_argument("sizes", nargs="*", type=int,
                    help="partitions of the changed RDD (default 100 1k 10k)")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "build":
            print(build(force=args.force))
        elif args.cmd == "jar":
            print(jar_path())
        else:
            print(run_bench(args.sizes, "EvictionBench" if args.cmd == "bench" else "ReplyBench"),
                  end="")
    except ShimBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
