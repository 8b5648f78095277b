import sys

from lrc.cli import main

sys.exit(main())
