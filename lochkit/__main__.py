from lochkit.cli import main

raise SystemExit(main())
