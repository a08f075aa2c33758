import sys

from gabarito.publish.site import main

sys.exit(main())
