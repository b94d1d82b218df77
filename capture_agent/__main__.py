from __future__ import annotations

import sys

from capture_agent.cli import main

sys.exit(main())
