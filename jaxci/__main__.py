from jaxci.cli import main

raise SystemExit(main())
