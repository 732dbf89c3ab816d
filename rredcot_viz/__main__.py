import sys

from rredcot_viz.cli import main

sys.exit(main())
