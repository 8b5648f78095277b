"""python -m spark_plugin COMMAND

  doctor                          check java, javac, the shim and a small job on two executor JVMs
  conf                            the spark.lrc.* table (markdown)
  report STATS [--plot OUT.png]   one application's stats, readable: STATS is the spark.lrc.statsPath
                                  JSON or a Spark event log with spark-lrc's summary event
  scale [--jobs N --parts P]      a synthetic application's events through the brain: time per
                                  phase, memory, structure sizes (spark_plugin/scale.py)
"""
import sys


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else "help"
    if cmd == "doctor":
        from .doctor import main as doctor

        doctor()
    elif cmd == "conf":
        from .config import markdown_table

        print(markdown_table())
    elif cmd == "report":
        from .report import main as report

        sys.exit(report(argv[1:]))
    elif cmd == "scale":
        from .scale import main as scale

        sys.exit(scale(argv[1:]))
    elif cmd == "plan-speed":
        from .plan_speed import main as plan_speed

        sys.exit(plan_speed(argv[1:]))
    else:
        print(__doc__)
        sys.exit(0 if cmd in ("help", "-h", "--help") else 2)


main(sys.argv[1:])
