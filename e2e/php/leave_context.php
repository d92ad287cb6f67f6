<?php
// Sets a context and ends the request without clearing it.
nmprof_context_set(99, 99);
nmprof_context_set_attribute('route', '/left');
echo "left\n";
