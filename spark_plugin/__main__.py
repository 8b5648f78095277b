"""`python -m spark_plugin doctor` | `python -m spark_plugin conf` (the spark.lrc.* table)."""
import sys


def main(argv: list[str]) -> None:
    cmd = argv[0] if argv else "help"
    if cmd == "doctor":
        from .doctor import main as doctor

        doctor()
    elif cmd == "conf":
        from .config import markdown_table

        print(markdown_table())
    else:
        print(__doc__)
        sys.exit(0 if cmd in ("help", "-h", "--help") else 2)


main(sys.argv[1:])
